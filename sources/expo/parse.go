package expo

import (
	"bytes"
	"errors"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxRetries bounds how often a recovered block is re-parsed after
// dropping a line that only fails in combination with others.
const maxRetries = 8

// parser drives expfmt over the rebuilt body with recovery.
type parser struct {
	s      *scanner
	p      *expfmt.TextParser
	parsed int // bytes expfmt has read so far (it stops at the first error)
}

// parse runs expfmt over b. A panic inside expfmt (none is known; this is
// belt and braces for network input) becomes an error for that input.
func (pp *parser) parse(b []byte) (m map[string]*dto.MetricFamily, err error) {
	r := bytes.NewReader(b)
	defer func() {
		pp.parsed += len(b) - r.Len()
		if p := recover(); p != nil {
			m, err = nil, errParserPanic
			pp.p = newTextParser() // its state is unknown after a panic
		}
	}()
	return pp.p.TextToMetricFamilies(r)
}

var errParserPanic = errors.New("the expfmt parser panicked on this input")

func newTextParser() *expfmt.TextParser {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return &p
}

// parseAll parses every kept block. The happy path is one expfmt call
// (plus one per family isolated by emit).
// When it fails, its partial map is discarded (expfmt leaves invented
// zeros in it); the blocks before the failing one are parsed again
// together, the failing block is recovered on its own, and parsing resumes
// after it. Each byte is parsed a bounded number of times, so the cost
// stays linear in the body.
func (pp *parser) parseAll() map[string]*dto.MetricFamily {
	sc := pp.s.sc
	out := sc.out
	blocks, isolated := sc.blocks[:pp.s.nMain], sc.blocks[pp.s.nMain:]
	var result map[string]*dto.MetricFamily
	for i := range isolated {
		result = pp.recoverBlock(&isolated[i], result)
	}
	for pos := 0; pos < len(blocks); {
		m, err := pp.parse(out[blocks[pos].start:blocks[len(blocks)-1].end])
		if err == nil {
			result = merge(result, m)
			break
		}
		k := pp.failingBlock(err, pos)
		if k > pos {
			if m, err := pp.parse(out[blocks[pos].start:blocks[k-1].end]); err == nil {
				result = merge(result, m)
			} else {
				for j := pos; j < k; j++ {
					result = pp.recoverBlock(&blocks[j], result)
				}
			}
		}
		result = pp.recoverBlock(&blocks[k], result)
		pos = k + 1
	}
	if result == nil {
		result = map[string]*dto.MetricFamily{}
	}
	return result
}

// failingBlock returns the index of the block (at or after pos) holding
// the line expfmt complained about.
func (pp *parser) failingBlock(err error, pos int) int {
	blocks := pp.s.sc.blocks[:pp.s.nMain]
	var pe expfmt.ParseError
	if !errors.As(err, &pe) || pe.Line < 1 {
		return pos
	}
	idx := blocks[pos].line0 + pe.Line - 1
	rest := blocks[pos:]
	i := sort.Search(len(rest), func(i int) bool { return rest[i].line0 > idx })
	if i == 0 {
		return pos
	}
	return pos + i - 1
}

// recoverBlock parses one block on its own; if that fails, it finds the
// bad lines by parsing each sample line with the block's header, repairs
// what can be repaired, records the rest as problems, and parses the good
// lines together.
func (pp *parser) recoverBlock(b *block, result map[string]*dto.MetricFamily) map[string]*dto.MetricFamily {
	s := pp.s
	out, lineMap := s.sc.out, s.sc.lineMap
	if m, err := pp.parse(out[b.start:b.end]); err == nil {
		return merge(result, m)
	}
	hdr := out[b.start:b.hdrEnd]
	hdrLines := lineMap[b.line0 : b.line0+b.nHdr]
	if b.nHdr > 0 {
		if _, err := pp.parse(hdr); err != nil {
			hdr, hdrLines = pp.fixHeader(hdr, hdrLines)
		}
	}

	good := make([]byte, 0, b.end-b.start)
	good = append(good, hdr...)
	goodLines := append(make([]int32, 0, 16), hdrLines...)
	one := make([]byte, 0, len(hdr)+256)
	li := b.line0 + b.nHdr
	for p := b.hdrEnd; p < b.end; li++ {
		nl := bytes.IndexByte(out[p:b.end], '\n')
		line := out[p : p+nl]
		p += nl + 1
		no := lineMap[li]

		one = append(append(append(one[:0], hdr...), line...), '\n')
		_, err := pp.parse(one)
		if err != nil {
			if fixed, kind, ok := repair(line); ok {
				one = append(append(append(one[:0], hdr...), fixed...), '\n')
				if _, err = pp.parse(one); err == nil {
					line = fixed
					s.warn.repaired(kind, no)
				}
			}
		}
		if err != nil {
			s.problem(no, errMessage(err), line)
			continue
		}
		good = append(append(good, line...), '\n')
		goodLines = append(goodLines, no)
	}

	for range maxRetries {
		m, err := pp.parse(good)
		if err == nil {
			return merge(result, m)
		}
		var pe expfmt.ParseError
		if !errors.As(err, &pe) || pe.Line <= len(hdrLines) || pe.Line > len(goodLines) {
			break
		}
		// A line that parses alone but not with the others: drop it.
		start, end := lineBounds(good, pe.Line)
		s.problem(goodLines[pe.Line-1], pe.Msg, good[start:end-1])
		good = append(good[:start], good[end:]...)
		goodLines = append(goodLines[:pe.Line-1], goodLines[pe.Line:]...)
	}
	s.problem(b.fam.firstLine, "family "+b.fam.name+" dropped: its lines do not parse together", nil)
	return result
}

// fixHeader keeps the header lines that parse on their own and records the
// others as problems.
func (pp *parser) fixHeader(hdr []byte, lines []int32) ([]byte, []int32) {
	var keptHdr []byte
	var keptLines []int32
	for i, p := 0, 0; p < len(hdr); i++ {
		nl := bytes.IndexByte(hdr[p:], '\n')
		line := hdr[p : p+nl+1]
		p += nl + 1
		if _, err := pp.parse(line); err != nil {
			pp.s.problem(lines[i], errMessage(err), line[:len(line)-1])
			continue
		}
		keptHdr = append(keptHdr, line...)
		keptLines = append(keptLines, lines[i])
	}
	return keptHdr, keptLines
}

// lineBounds returns the byte range of the n-th (1-based) line of b,
// including its newline.
func lineBounds(b []byte, n int) (start, end int) {
	for i := 1; i < n; i++ {
		start += bytes.IndexByte(b[start:], '\n') + 1
	}
	return start, start + bytes.IndexByte(b[start:], '\n') + 1
}

// errMessage is expfmt's message without its "line N" prefix (the line
// number it knows is in the rebuilt body, not the original).
func errMessage(err error) string {
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}

// merge adds src's families to dst (appending series when a family is in
// both) and returns dst.
func merge(dst, src map[string]*dto.MetricFamily) map[string]*dto.MetricFamily {
	if dst == nil {
		return src
	}
	for name, mf := range src {
		if d := dst[name]; d != nil {
			d.Metric = append(d.Metric, mf.Metric...)
			continue
		}
		dst[name] = mf
	}
	return dst
}
