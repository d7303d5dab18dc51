package expo

// Byte-level lexing shared by the pre-pass and line repair. Names are read
// exactly as expfmt reads them, so the pre-pass and expfmt agree on which
// family a line belongs to.

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func skipBlank(b []byte, i int) int {
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func tokenEnd(b []byte, i int) int {
	for i < len(b) && !isBlank(b[i]) {
		i++
	}
	return i
}

func isNameStart(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'
}

func isNameByte(c byte) bool { return isNameStart(c) || (c >= '0' && c <= '9') }

// legacyNameLen returns the length of the legacy metric name at b[0:].
func legacyNameLen(b []byte) int {
	if len(b) == 0 || !isNameStart(b[0]) {
		return 0
	}
	n := 1
	for n < len(b) && isNameByte(b[n]) {
		n++
	}
	return n
}

// isLegacyName reports whether name needs no quoting.
func isLegacyName(name string) bool {
	return name != "" && legacyNameLen([]byte(name)) == len(name)
}

// metricName lexes a metric name at b[0:] exactly as expfmt reads one:
// either a double-quoted name, or legacy name bytes optionally followed by
// a quoted part that ends the name (expfmt reads `a"b"` as the name "ab").
// n is the number of bytes consumed.
func metricName(b []byte) (name []byte, n int, ok bool) {
	if len(b) > 0 && b[0] == '"' {
		name, n, ok = quoted(b)
		return name, n, ok && len(name) > 0
	}
	n = legacyNameLen(b)
	if n == 0 {
		return nil, 0, false
	}
	if n < len(b) && b[n] == '"' {
		if q, qn, ok := quoted(b[n:]); ok {
			return append(append(make([]byte, 0, n+len(q)), b[:n]...), q...), n + qn, true
		}
	}
	return b[:n], n, true
}

// quoted lexes a double-quoted string at b[0:] with the text format's
// escapes (\\, \", \n; any other escaped byte stands for itself). It
// allocates only when the string has escapes; ok is false when the
// closing quote is missing.
func quoted(b []byte) (s []byte, n int, ok bool) {
	i := 1
	var out []byte
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			if out == nil {
				return b[1:i], i + 1, true
			}
			return out, i + 1, true
		case '\\':
			if out == nil {
				out = append(make([]byte, 0, len(b)), b[1:i]...)
			}
			i++
			if i < len(b) {
				if b[i] == 'n' {
					out = append(out, '\n')
				} else {
					out = append(out, b[i])
				}
			}
		default:
			if out != nil {
				out = append(out, c)
			}
		}
		i++
	}
	return nil, 0, false
}

// sampleName finds the metric name of a sample line (b starts at its
// first non-blank byte): foo{…}, "foo"{…} or {"foo", …}.
func sampleName(b []byte) ([]byte, bool) {
	switch b[0] {
	case '{':
		j := skipBlank(b, 1)
		if j < len(b) && b[j] == '"' {
			name, n, ok := quoted(b[j:])
			k := skipBlank(b, j+n)
			if ok && len(name) > 0 && k < len(b) && (b[k] == ',' || b[k] == '}') {
				return name, true
			}
		}
		return nil, false
	default:
		name, _, ok := metricName(b)
		return name, ok
	}
}

// appendName appends name as a token expfmt reads back as name: plain
// when it is a legacy name, quoted otherwise.
func appendName(dst []byte, name string) []byte {
	if isLegacyName(name) {
		return append(dst, name...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
