package promql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Matcher is one PromQL label matcher. Its String form is always safe to
// splice into a query: the value is written as a PromQL string literal
// with every quote, backslash and control character escaped (robustness.md
// §6.8), so no value — a hostile worker URL in a gateway label, a selector
// from the command line — can close the string and rewrite the query.
type Matcher struct {
	Name  string // label name, [a-zA-Z_][a-zA-Z0-9_]*
	Op    string // "=", "!=", "=~" or "!~"
	Value string // the literal value (for =~ / !~ a Go RE2 regex, anchored by Prometheus)
}

// String renders the matcher, e.g. namespace="serving".
func (m Matcher) String() string { return m.Name + m.Op + Quote(m.Value) }

// Quote returns s as a PromQL double-quoted string literal. PromQL string
// literals use Go's escaping rules, so strconv.Quote is exact: `"` and `\`
// are escaped, control and non-printable characters become \x, \u or \U
// escapes, and the result always parses back to s.
func Quote(s string) string { return strconv.Quote(s) }

// Eq matches label name equal to value.
func Eq(name, value string) Matcher { return Matcher{Name: name, Op: "=", Value: value} }

// Ne matches label name not equal to value ("" means "present").
func Ne(name, value string) Matcher { return Matcher{Name: name, Op: "!=", Value: value} }

// OneOf matches label name against any of values, each taken literally
// (regex-quoted), e.g. instance=~"10\\.0\\.0\\.1:30001|10\\.0\\.0\\.2:30001".
// With one value it is an equality matcher.
func OneOf(name string, values []string) Matcher {
	if len(values) == 1 {
		return Eq(name, values[0])
	}
	return Matcher{Name: name, Op: "=~", Value: literalAlternation(values)}
}

// literalAlternation is a regex matching exactly one of values.
func literalAlternation(values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = regexp.QuoteMeta(v)
	}
	return strings.Join(parts, "|")
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// ValidLabelName reports whether s is a label name PromQL accepts
// unquoted.
func ValidLabelName(s string) bool { return labelName.MatchString(s) }

// ParseSelector parses a series selector given by the user, such as
// `{namespace="serving", cluster=~"eu-.*"}` (the braces are optional), into
// matchers. Values may be double-, single- or back-quoted as in PromQL.
// Metric names and __name__ matchers are refused: pdtop chooses the
// metrics; the selector only narrows which series. Regexes must compile.
// The error names the position and what was expected.
func ParseSelector(s string) ([]Matcher, error) {
	p := &selParser{s: strings.TrimSpace(s)}
	if p.s == "" {
		return nil, nil
	}
	braced := p.peek() == '{'
	if braced {
		p.pos++
	} else if r := p.peek(); r != 0 && r != '_' && !isLetter(r) {
		return nil, p.fail("a label name or '{'")
	}
	var out []Matcher
	for {
		p.space()
		if braced && p.peek() == '}' {
			p.pos++
			break
		}
		if p.eof() {
			if braced {
				return nil, p.fail("'}'")
			}
			break
		}
		m, err := p.matcher()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		p.space()
		if p.peek() == ',' {
			p.pos++
			continue
		}
		if braced && p.peek() == '}' {
			p.pos++
			break
		}
		if !braced && p.eof() {
			break
		}
		return nil, p.fail("',' or '}'")
	}
	p.space()
	if !p.eof() {
		return nil, p.fail("the end of the selector (a metric name is not allowed: pdtop picks the metrics)")
	}
	return out, nil
}

type selParser struct {
	s   string
	pos int
}

func (p *selParser) eof() bool { return p.pos >= len(p.s) }

func (p *selParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.pos]
}

func (p *selParser) space() {
	for !p.eof() && strings.IndexByte(" \t\n\r", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *selParser) fail(want string) error {
	near := p.s[p.pos:]
	if len(near) > 20 {
		near = near[:20] + "…"
	}
	if near == "" {
		return fmt.Errorf("selector: expected %s at the end", want)
	}
	return fmt.Errorf("selector: expected %s at offset %d near %q", want, p.pos, near)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func (p *selParser) matcher() (Matcher, error) {
	start := p.pos
	for !p.eof() && (isLetter(p.s[p.pos]) || p.s[p.pos] == '_' || (p.pos > start && p.s[p.pos] >= '0' && p.s[p.pos] <= '9')) {
		p.pos++
	}
	name := p.s[start:p.pos]
	if name == "" {
		return Matcher{}, p.fail("a label name")
	}
	if name == "__name__" {
		return Matcher{}, fmt.Errorf("selector: __name__ is not allowed: pdtop picks the metrics; the selector only narrows the series")
	}
	p.space()
	if p.peek() == '{' {
		return Matcher{}, fmt.Errorf("selector: %q looks like a metric name, which is not allowed: pdtop picks the metrics; give only label matchers such as {job=\"sglang\"}", name)
	}
	var op string
	for _, o := range []string{"=~", "!~", "!=", "="} {
		if strings.HasPrefix(p.s[p.pos:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return Matcher{}, p.fail("=, !=, =~ or !~ after " + name)
	}
	p.pos += len(op)
	p.space()
	val, err := p.str()
	if err != nil {
		return Matcher{}, err
	}
	if op == "=~" || op == "!~" {
		if _, err := regexp.Compile("^(?:" + val + ")$"); err != nil {
			return Matcher{}, fmt.Errorf("selector: %s%s: bad regex: %v", name, op, err)
		}
	}
	return Matcher{Name: name, Op: op, Value: val}, nil
}

// str reads one quoted string literal.
func (p *selParser) str() (string, error) {
	q := p.peek()
	if q != '"' && q != '\'' && q != '`' {
		return "", p.fail("a quoted value")
	}
	start := p.pos
	p.pos++
	for !p.eof() {
		c := p.s[p.pos]
		if c == '\\' && q != '`' {
			p.pos += 2
			continue
		}
		p.pos++
		if c == q {
			lit := p.s[start:p.pos]
			if q == '\'' {
				// PromQL single quotes: same escapes as double quotes.
				lit = singleToDouble(lit[1 : len(lit)-1])
			}
			v, err := strconv.Unquote(lit)
			if err != nil {
				p.pos = start
				return "", p.fail("a valid string literal")
			}
			if !utf8.ValidString(v) {
				p.pos = start
				return "", p.fail("valid UTF-8 in the value")
			}
			return v, nil
		}
	}
	p.pos = start
	return "", p.fail("a closing quote")
}

// singleToDouble rewrites the inside of a single-quoted PromQL literal as
// a double-quoted Go literal with the same meaning.
func singleToDouble(inner string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		switch {
		case c == '\\' && i+1 < len(inner):
			if inner[i+1] == '\'' {
				b.WriteByte('\'')
			} else {
				b.WriteByte('\\')
				b.WriteByte(inner[i+1])
			}
			i++
		case c == '"':
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
