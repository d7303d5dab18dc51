package expo

import (
	"bytes"
	"math"
	"strconv"
)

// What repair changed in a line.
type repairKind uint8

const (
	repairOverflow  repairKind = 1 << iota // value out of float64 range → ±Inf
	repairExemplar                         // OpenMetrics exemplar dropped
	repairTimestamp                        // non-integer (OpenMetrics seconds) timestamp dropped
)

// repair rewrites what a lenient reader can safely fix in a sample line
// that expfmt rejected: a decimal value beyond float64 range (1e400)
// becomes ±Inf, and an OpenMetrics exemplar or float timestamp is dropped
// (pdtop ignores exposed timestamps). Hex floats and digit separators are
// not repaired: that line is a problem. ok is false when nothing applies.
func repair(line []byte) (fixed []byte, kind repairKind, ok bool) {
	i := skipBlank(line, 0)
	if i < len(line) && line[i] != '{' {
		_, n, ok := metricName(line[i:])
		if !ok {
			return nil, 0, false
		}
		i += n
	}
	i = skipBlank(line, i)
	if i < len(line) && line[i] == '{' {
		j, ok := skipLabels(line, i)
		if !ok {
			return nil, 0, false
		}
		i = skipBlank(line, j)
	}
	vs, ve := i, tokenEnd(line, i)
	if vs == ve {
		return nil, 0, false
	}
	value := line[vs:ve]
	if !bytes.ContainsAny(value, "xXpP_") {
		if v, err := strconv.ParseFloat(string(value), 64); err != nil && math.IsInf(v, 0) {
			kind |= repairOverflow
			value = []byte("+Inf")
			if v < 0 {
				value = []byte("-Inf")
			}
		}
	}
	tail := line[ve:]
	if j := skipBlank(tail, 0); j < len(tail) {
		if tail[j] == '#' {
			kind |= repairExemplar
			tail = nil
		} else {
			te := tokenEnd(tail, j)
			ts := string(tail[j:te])
			if _, err := strconv.ParseInt(ts, 10, 64); err == nil {
				if k := skipBlank(tail, te); k < len(tail) && tail[k] == '#' {
					kind |= repairExemplar
					tail = tail[:te]
				}
			} else if _, err := strconv.ParseFloat(ts, 64); err == nil && !bytes.ContainsAny(tail[j:te], "xXpP_") {
				kind |= repairTimestamp
				if k := skipBlank(tail, te); k < len(tail) && tail[k] == '#' {
					kind |= repairExemplar
				}
				tail = nil
			}
		}
	}
	if kind == 0 {
		return nil, 0, false
	}
	fixed = make([]byte, 0, len(line))
	fixed = append(fixed, line[:vs]...)
	fixed = append(fixed, value...)
	fixed = append(fixed, tail...)
	return fixed, kind, true
}

// skipLabels returns the index just past the label set that starts with
// '{' at b[i], honouring quotes and escapes.
func skipLabels(b []byte, i int) (int, bool) {
	inQuote := false
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '}':
			return i + 1, true
		}
	}
	return 0, false
}
