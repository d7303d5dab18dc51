package record

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Format and Version identify a recording.
const (
	Format  = "pdtop-recording"
	Version = 1
)

// Kind is a record type.
type Kind uint8

// Record kinds.
const (
	KindHeader  Kind = 1
	KindTargets Kind = 2
	KindScrape  Kind = 3
	KindSkipped Kind = 4
	// KindObservation is a result with no raw body of its own: a worker
	// read through its gateway's /engine_metrics re-export.
	KindObservation Kind = 5
)

// maxPayload bounds one record (a body over the scrape cap never gets
// here; this only guards readers against a corrupt length).
const maxPayload = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options tune a Writer.
type Options struct {
	// FlushEvery is the longest time records stay in memory: the current
	// gzip member is closed (written out) this often (default 1 s).
	FlushEvery time.Duration
	// SyncEvery, when the destination is a regular file, is how often it
	// is synced to disk (default 5 s).
	SyncEvery time.Duration
	// Interval is the scrape interval, kept in the header.
	Interval time.Duration
	// Created is the header's creation time (default time.Now()).
	Created time.Time
}

// Writer appends records to a recording. It is safe for concurrent use;
// write errors are sticky: after the first, writes do nothing and Err
// returns it.
type Writer struct {
	mu      sync.Mutex
	dst     io.Writer
	gz      *gzip.Writer
	opts    Options
	open    bool // a member has records not yet closed
	opened  time.Time
	synced  time.Time
	err     error
	records int
	written int64
	buf     []byte
	stop    chan struct{}
	done    chan struct{}
	syncer  *os.File // dst, when it is a regular file
}

// countWriter counts bytes written to the destination.
type countWriter struct {
	w *Writer
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.dst.Write(p)
	c.w.written += int64(n)
	return n, err
}

// NewWriter starts a recording on dst: it writes the header record and
// flushes it, and starts a goroutine that closes the current member every
// FlushEvery. Close stops it.
func NewWriter(dst io.Writer, opts Options) (*Writer, error) {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = time.Second
	}
	if opts.SyncEvery <= 0 {
		opts.SyncEvery = 5 * time.Second
	}
	if opts.Created.IsZero() {
		opts.Created = time.Now()
	}
	w := &Writer{dst: dst, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	if f, ok := dst.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			w.syncer = f
		}
	}
	gz, err := gzip.NewWriterLevel(countWriter{w}, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	w.gz = gz
	hdr, _ := json.Marshal(headerJSON{Format: Format, Version: Version, Created: opts.Created.UTC().Format(time.RFC3339Nano),
		IntervalMS: opts.Interval.Milliseconds(), Tool: "pdtop"})
	w.mu.Lock()
	w.append(KindHeader, hdr, nil)
	w.flushLocked()
	err = w.err
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	go w.loop()
	return w, nil
}

type headerJSON struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Created    string `json:"created"`
	IntervalMS int64  `json:"interval_ms"`
	Tool       string `json:"tool"`
}

type targetJSON struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Role    string `json:"role"`
	Origin  string `json:"origin,omitempty"`
	Gateway string `json:"gateway,omitempty"`
	// Key is host:port as gateways know the worker (Target.Key): it joins
	// the gateways' per-worker series to the target.
	Key  string `json:"key,omitempty"`
	Auth string `json:"auth,omitempty"`
}

type targetsJSON struct {
	T       int64        `json:"t"`
	Targets []targetJSON `json:"targets"`
}

type errJSON struct {
	Class  string `json:"class"`
	Status int    `json:"status,omitempty"`
	Msg    string `json:"msg"`
}

type scrapeJSON struct {
	T     int64    `json:"t"`
	ID    string   `json:"id"`
	DurNS int64    `json:"dur_ns"`
	Wire  int64    `json:"wire"`
	Body  int64    `json:"body"`
	Err   *errJSON `json:"err,omitempty"`
	Warn  []string `json:"warn,omitempty"`
	// Via and DirectErr: a result read through a gateway's re-export.
	Via       string   `json:"via,omitempty"`
	DirectErr *errJSON `json:"direct_err,omitempty"`
}

func errOf(e *sources.ScrapeError) *errJSON {
	if e == nil {
		return nil
	}
	return &errJSON{Class: string(e.Class), Status: e.Status, Msg: e.Message}
}

type skippedJSON struct {
	T  int64  `json:"t"`
	ID string `json:"id"`
}

// SafeID returns id as it is written: an ID that is a URL keeps only
// scheme://host:port/path, so userinfo, query strings and fragments
// never reach a file even if a caller used a raw URL as an ID.
func SafeID(id string) string {
	if !strings.Contains(id, "://") {
		return id
	}
	u, err := url.Parse(strings.TrimSpace(id))
	if err != nil || u.Host == "" {
		return "<invalid URL>"
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" && !strings.Contains(id, "?") && !strings.Contains(id, "#") {
		return id
	}
	return sources.DisplayURL(id)
}

// Targets records the full target list at time at. URLs are never
// written: only ID (SafeID), name, role, origin, gateway, the host:port
// key gateways know a worker by, and the (secret-free) auth summary.
func (w *Writer) Targets(at time.Time, ts []sources.Target) {
	out := targetsJSON{T: at.UnixNano(), Targets: make([]targetJSON, 0, len(ts))}
	for _, t := range ts {
		out.Targets = append(out.Targets, targetJSON{ID: SafeID(t.ID), Name: t.Name, Role: t.Role.String(),
			Origin: string(t.Origin), Gateway: SafeID(t.Gateway), Key: t.Key(), Auth: t.Auth})
	}
	b, _ := json.Marshal(out)
	w.write(KindTargets, b, nil)
}

// Result records one scrape outcome as it is ingested: its receive time,
// duration and byte counts, its classified error, and its raw body and
// fetch warnings (ScrapeResult.Raw: collect.Scraper.KeepBodies). A
// result with figures but no raw body (a worker read through its
// gateway's re-export) is recorded as its observation. A skipped tick is
// recorded as such. Its signature fits collect.Live.Observe.
func (w *Writer) Result(t sources.Target, res sources.ScrapeResult) {
	if res.Skipped {
		w.Skipped(res.TargetID, res.Time)
		return
	}
	id := res.TargetID
	if id == "" {
		id = t.ID
	}
	m := scrapeJSON{T: res.Time.UnixNano(), ID: SafeID(id), DurNS: int64(res.Duration), Wire: res.BytesWire,
		Body: res.BytesBody, Err: errOf(res.Err), Via: res.Via, DirectErr: errOf(res.DirectErr)}
	var body []byte
	kind := KindScrape
	switch {
	case res.Err != nil:
	case res.Raw != nil:
		body, m.Warn = res.Raw.Body, res.Raw.Warnings
	case res.Obs != nil:
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(res.Obs); err != nil {
			w.fail(err)
			return
		}
		kind, body = KindObservation, buf.Bytes()
	}
	meta, _ := json.Marshal(m)
	head := binary.AppendUvarint(nil, uint64(len(meta)))
	w.write(kind, append(head, meta...), body)
}

func (w *Writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// Skipped records a tick skipped because the target's previous scrape
// was still running.
func (w *Writer) Skipped(id string, at time.Time) {
	b, _ := json.Marshal(skippedJSON{T: at.UnixNano(), ID: SafeID(id)})
	w.write(KindSkipped, b, nil)
}

func (w *Writer) write(k Kind, payload, tail []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.gz == nil {
		return
	}
	w.append(k, payload, tail)
	if time.Since(w.opened) >= w.opts.FlushEvery {
		w.flushLocked()
	}
}

// append writes one record (payload followed by tail) into the current
// member.
func (w *Writer) append(k Kind, payload, tail []byte) {
	if !w.open {
		w.open, w.opened = true, time.Now()
	}
	n := len(payload) + len(tail)
	w.buf = append(w.buf[:0], byte(k))
	w.buf = binary.AppendUvarint(w.buf, uint64(n))
	crc := crc32.Update(0, castagnoli, []byte{byte(k)})
	crc = crc32.Update(crc, castagnoli, payload)
	crc = crc32.Update(crc, castagnoli, tail)
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc)
	for _, p := range [][]byte{w.buf, payload, tail, sum[:]} {
		if _, err := w.gz.Write(p); err != nil {
			w.err = err
			return
		}
	}
	w.records++
}

// flushLocked closes the current member so everything so far is in the
// destination, and syncs it when due.
func (w *Writer) flushLocked() {
	if !w.open || w.err != nil {
		return
	}
	if err := w.gz.Close(); err != nil {
		w.err = err
		return
	}
	w.gz.Reset(countWriter{w})
	w.open = false
	if w.syncer != nil && time.Since(w.synced) >= w.opts.SyncEvery {
		w.synced = time.Now()
		if err := w.syncer.Sync(); err != nil {
			w.err = err
		}
	}
}

// Flush writes out every record so far (closing the current member).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	return w.err
}

func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(w.opts.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.mu.Lock()
			if w.open && time.Since(w.opened) >= w.opts.FlushEvery/2 {
				w.flushLocked()
			}
			w.mu.Unlock()
		}
	}
}

// Close flushes and stops the writer; it does not close the destination.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.gz == nil {
		w.mu.Unlock()
		return w.err
	}
	w.flushLocked()
	w.gz = nil
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	return w.err
}

// Err returns the first write error, nil while all is well.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stats returns the records and compressed bytes written so far.
func (w *Writer) Stats() (records int, bytes int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.records, w.written
}
