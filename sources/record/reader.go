package record

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Header is a recording's first record.
type Header struct {
	Format   string
	Version  int
	Created  time.Time
	Interval time.Duration
	Tool     string
}

// Record is one decoded record.
type Record struct {
	Kind Kind
	// Time is the record's time: the receive time of a scrape, when a
	// skipped tick happened, when the target list changed.
	Time time.Time
	// Targets is the full target list (KindTargets). URL is empty: it is
	// never recorded.
	Targets []sources.Target
	// Result is a scrape's outcome without the parse (KindScrape) — feed
	// it with Body and Warnings to collect.FromBody when Err is nil —, a
	// re-exported worker's outcome with its Obs (KindObservation), or a
	// skipped tick (KindSkipped, Skipped true).
	Result   sources.ScrapeResult
	Body     []byte
	Warnings []string
	// Member is the file offset of the gzip member holding the record: a
	// Reader started there (NewReaderAt) reads it again.
	Member int64
}

// DamageError says where and why a damaged recording stopped being
// readable. Every record before it was whole and checksummed.
type DamageError struct {
	// Offset is the byte in the file where the damaged member starts.
	Offset int64
	// Records is how many records were read before the damage.
	Records int
	// Reason is what was wrong, in words.
	Reason string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("recording damaged in the block at byte %d, after %d records: %s", e.Offset, e.Records, e.Reason)
}

// Short is the damage in a few words, for a status line: "truncated at
// byte 995121" or "damaged at byte 4096 (record 12 fails its checksum)".
func (e *DamageError) Short() string {
	if strings.Contains(e.Reason, "truncated") {
		return fmt.Sprintf("truncated at byte %d", e.Offset)
	}
	reason, _, _ := strings.Cut(e.Reason, ":")
	return fmt.Sprintf("damaged at byte %d (%s)", e.Offset, reason)
}

// counter counts the bytes the decompressor consumes, so member offsets
// are exact (it is an io.ByteReader, so flate reads no further ahead).
type counter struct {
	r *bufio.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *counter) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// Reader reads records in order.
type Reader struct {
	src     *counter
	base    int64
	gz      *gzip.Reader
	rec     *bufio.Reader
	member  int64
	hdr     Header
	records int
	err     error
}

// NewReader reads a recording from its start; it fails unless the first
// record is a pdtop recording header of a version it knows.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{src: &counter{r: bufio.NewReaderSize(r, 256<<10)}}
	if err := rd.nextMember(); err != nil {
		if err == io.EOF {
			return nil, errors.New("empty file: not a pdtop recording")
		}
		if d, ok := err.(*DamageError); ok && d.Offset == 0 {
			return nil, errors.New("not a pdtop recording (not gzip data)")
		}
		return nil, err
	}
	rec, err := rd.Next()
	if err != nil {
		if _, ok := err.(*DamageError); ok {
			return nil, fmt.Errorf("not a pdtop recording, or damaged at the start: %v", err)
		}
		return nil, errors.New("not a pdtop recording (no header)")
	}
	if rec.Kind != KindHeader {
		return nil, errors.New("not a pdtop recording (no header record)")
	}
	return rd, nil
}

// NewReaderAt continues reading r at a member offset taken from an
// earlier Record.Member (r positioned there, e.g. by Seek). hdr is the
// recording's header from the first Reader.
func NewReaderAt(r io.Reader, offset int64, hdr Header) (*Reader, error) {
	rd := &Reader{src: &counter{r: bufio.NewReaderSize(r, 256<<10)}, base: offset, hdr: hdr}
	if err := rd.nextMember(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Header returns the recording's header.
func (r *Reader) Header() Header { return r.hdr }

// nextMember opens the next gzip member; io.EOF at a clean end.
func (r *Reader) nextMember() error {
	r.member = r.base + r.src.n
	var err error
	if r.gz == nil {
		r.gz, err = gzip.NewReader(r.src)
	} else {
		err = r.gz.Reset(r.src)
	}
	switch {
	case err == io.EOF:
		return io.EOF
	case err != nil:
		return r.damage("not a gzip block (" + describe(err) + ")")
	}
	r.gz.Multistream(false)
	if r.rec == nil {
		r.rec = bufio.NewReaderSize(r.gz, 64<<10)
	} else {
		r.rec.Reset(r.gz)
	}
	return nil
}

func (r *Reader) damage(reason string) error {
	return &DamageError{Offset: r.member, Records: r.records, Reason: reason}
}

// describe turns a decompression error into words.
func describe(err error) string {
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated: the file ends inside it (the recorder stopped before its last flush)"
	case errors.Is(err, gzip.ErrChecksum):
		return "its checksum does not match"
	case errors.Is(err, gzip.ErrHeader):
		return "bad gzip header"
	case errors.As(err, &ce):
		return "corrupt compressed data"
	}
	return err.Error()
}

// Next returns the next record; io.EOF at the clean end of the file, a
// *DamageError where the file is damaged (the error stays: later calls
// return it again).
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	for {
		kb, err := r.rec.ReadByte()
		if err == io.EOF {
			if err := r.nextMember(); err != nil {
				return Record{}, err
			}
			continue
		}
		if err != nil {
			return Record{}, r.damage(describe(err))
		}
		n, err := binary.ReadUvarint(r.rec)
		if err != nil {
			return Record{}, r.damage(describe(eofIsUnexpected(err)))
		}
		if n > maxPayload {
			return Record{}, r.damage(fmt.Sprintf("implausible record length %d", n))
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r.rec, payload); err != nil {
			return Record{}, r.damage(describe(eofIsUnexpected(err)))
		}
		var sum [4]byte
		if _, err := io.ReadFull(r.rec, sum[:]); err != nil {
			return Record{}, r.damage(describe(eofIsUnexpected(err)))
		}
		crc := crc32.Update(0, castagnoli, []byte{kb})
		crc = crc32.Update(crc, castagnoli, payload)
		if crc != binary.LittleEndian.Uint32(sum[:]) {
			return Record{}, r.damage(fmt.Sprintf("record %d fails its checksum", r.records+1))
		}
		rec, ok, err := r.decode(Kind(kb), payload)
		if err != nil {
			return Record{}, r.damage(fmt.Sprintf("record %d: %v", r.records+1, err))
		}
		r.records++
		if !ok {
			continue // a kind this version does not know: skipped
		}
		rec.Member = r.member
		return rec, nil
	}
}

func scrapeErr(e *errJSON) *sources.ScrapeError {
	if e == nil {
		return nil
	}
	return &sources.ScrapeError{Class: sources.ErrorClass(e.Class), Status: e.Status, Message: e.Msg}
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (r *Reader) decode(k Kind, p []byte) (Record, bool, error) {
	rec := Record{Kind: k}
	switch k {
	case KindHeader:
		var h headerJSON
		if err := json.Unmarshal(p, &h); err != nil {
			return rec, false, fmt.Errorf("bad header: %v", err)
		}
		if h.Format != Format {
			return rec, false, fmt.Errorf("format %q is not %q", h.Format, Format)
		}
		if h.Version > Version {
			return rec, false, fmt.Errorf("recorded in format version %d; this pdtop reads up to %d (upgrade pdtop)", h.Version, Version)
		}
		created, _ := time.Parse(time.RFC3339Nano, h.Created)
		r.hdr = Header{Format: h.Format, Version: h.Version, Created: created,
			Interval: time.Duration(h.IntervalMS) * time.Millisecond, Tool: h.Tool}
		rec.Time = created
	case KindTargets:
		var t targetsJSON
		if err := json.Unmarshal(p, &t); err != nil {
			return rec, false, fmt.Errorf("bad target list: %v", err)
		}
		rec.Time = time.Unix(0, t.T).UTC()
		for _, x := range t.Targets {
			rec.Targets = append(rec.Targets, sources.Target{ID: x.ID, Name: x.Name, Role: sources.ParseRole(x.Role),
				Origin: sources.Origin(x.Origin), Gateway: x.Gateway, Addr: x.Key, Auth: x.Auth})
		}
	case KindScrape, KindObservation:
		n, used := binary.Uvarint(p)
		if used <= 0 || uint64(len(p)-used) < n {
			return rec, false, errors.New("bad scrape record")
		}
		var m scrapeJSON
		if err := json.Unmarshal(p[used:used+int(n)], &m); err != nil {
			return rec, false, fmt.Errorf("bad scrape metadata: %v", err)
		}
		rec.Time = time.Unix(0, m.T).UTC()
		rec.Result = sources.ScrapeResult{TargetID: m.ID, Time: rec.Time, Duration: time.Duration(m.DurNS),
			BytesWire: m.Wire, BytesBody: m.Body}
		rec.Result.Err, rec.Result.DirectErr = scrapeErr(m.Err), scrapeErr(m.DirectErr)
		rec.Result.Via = m.Via
		rec.Body = p[used+int(n):]
		rec.Warnings = m.Warn
		if k == KindObservation {
			var obs sources.Observation
			if err := gob.NewDecoder(bytes.NewReader(rec.Body)).Decode(&obs); err != nil {
				return rec, false, fmt.Errorf("bad observation: %v", err)
			}
			rec.Result.Obs, rec.Body = &obs, nil
		}
	case KindSkipped:
		var s skippedJSON
		if err := json.Unmarshal(p, &s); err != nil {
			return rec, false, fmt.Errorf("bad skipped record: %v", err)
		}
		rec.Time = time.Unix(0, s.T).UTC()
		rec.Result = sources.ScrapeResult{TargetID: s.ID, Time: rec.Time, Skipped: true}
	default:
		return rec, false, nil
	}
	return rec, true, nil
}
