package promql

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Values a hostile target, gateway or user could put in a label.
var hostileValues = []string{
	`a"} or vector(1) or up{x="`,
	`back\slash\`,
	"new\nline\rreturn\ttab",
	"\x1b]0;title\x07\x1b[2J",
	"bidi \u202e override",
	`.*|(a+)+$`,
	"日本語",
	"",
}

// Every matcher renders as one PromQL string literal that reads back as
// the exact value, whatever it holds.
func TestMatcherEscapesHostileValues(t *testing.T) {
	for _, v := range hostileValues {
		m := Eq("instance", v)
		s := m.String()
		lit := strings.TrimPrefix(s, "instance=")
		got, err := strconv.Unquote(lit)
		if err != nil || got != v {
			t.Errorf("%q rendered as %s: reads back %q, %v", v, s, got, err)
		}
		if strings.ContainsAny(lit, "\n\r\x1b\x07") {
			t.Errorf("%q rendered with raw control characters: %q", v, s)
		}
		// Our own parser (the one --selector uses) reads it back too.
		ms, err := ParseSelector("{" + s + "}")
		if err != nil || len(ms) != 1 || ms[0].Value != v {
			t.Errorf("ParseSelector(%s) = %+v, %v", s, ms, err)
		}
	}
}

// OneOf matches exactly the given values, each taken literally.
func TestOneOfIsALiteralAlternation(t *testing.T) {
	values := []string{"10.0.0.1:30001", `a.b|c`, `x"y`, `(z)+`}
	m := OneOf("instance", values)
	if m.Op != "=~" {
		t.Fatalf("op %q", m.Op)
	}
	re := regexp.MustCompile("^(?:" + m.Value + ")$") // Prometheus anchors like this
	for _, v := range values {
		if !re.MatchString(v) {
			t.Errorf("%q not matched by %s", v, m)
		}
	}
	for _, v := range []string{"10x0x0x1:30001", "a.b", "c", "zz", `(z)`, ""} {
		if re.MatchString(v) {
			t.Errorf("%q matched by %s", v, m)
		}
	}
	if one := OneOf("instance", []string{`a"b`}); one.Op != "=" || one.Value != `a"b` {
		t.Errorf("one value: %+v", one)
	}
}

// The gateway's worker label (a URL) matches the worker's instance
// however it is spelt, and nothing else.
func TestWorkerKeyRegex(t *testing.T) {
	re := regexp.MustCompile("^(?:" + workerKeyRegex([]string{"10.0.0.1:30001", `evil"|.*`}) + ")$")
	for _, v := range []string{"http://10.0.0.1:30001", "HTTP://10.0.0.1:30001/", "10.0.0.1:30001", "grpc://u@10.0.0.1:30001/x", `http://evil"|.*`} {
		if !re.MatchString(v) {
			t.Errorf("%q not matched", v)
		}
	}
	for _, v := range []string{"http://10.0.0.1:300011", "http://10.0.0.2:30001", "http://anything", "evil"} {
		if re.MatchString(v) {
			t.Errorf("%q matched", v)
		}
	}
}

func TestParseSelector(t *testing.T) {
	good := map[string][]Matcher{
		``:                      nil,
		`{}`:                    nil,
		`{namespace="serving"}`: {Eq("namespace", "serving")},
		` namespace = 'a\'b' , cluster=~"eu-.*" `: {Eq("namespace", "a'b"), {Name: "cluster", Op: "=~", Value: "eu-.*"}},
		"{job!=`raw\\n`, x!~\"y\"}":               {Ne("job", `raw\n`), {Name: "x", Op: "!~", Value: "y"}},
		`{a="1",}`:                                {Eq("a", "1")},
	}
	for in, want := range good {
		got, err := ParseSelector(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %+v, want %+v", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %+v, want %+v", in, got[i], want[i])
			}
		}
	}
	bad := map[string]string{
		`up{job="x"}`:            "looks like a metric name",
		`-{job="x"}`:             "a label name or '{'",
		`{__name__="up"}`:        "__name__ is not allowed",
		`{job="x"} or vector(1)`: "the end of the selector",
		`{job="x"`:               "'}'",
		`{job=x}`:                "a quoted value",
		`{job="x}`:               "a closing quote",
		`{job=~"("}`:             "bad regex",
		`{job<"x"}`:              "=, !=, =~ or !~",
		`{1job="x"}`:             "a label name",
	}
	for in, want := range bad {
		_, err := ParseSelector(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", in, err, want)
		}
	}
}

// A metric selector built from a hostile name keeps it inside one regex
// literal.
func TestVectorSelector(t *testing.T) {
	if got := vs([]string{"sglang:num_queue_reqs"}); got != "sglang:num_queue_reqs" {
		t.Errorf("plain name: %s", got)
	}
	if got := vs([]string{"sglang:x", "sglang_x"}, Eq("a", "b")); got != `{__name__=~"sglang:x|sglang_x", a="b"}` {
		t.Errorf("spellings: %s", got)
	}
	if got := vs([]string{`bad"name`}); got != `{__name__=~"bad\"name"}` {
		t.Errorf("hostile name: %s", got)
	}
	if got := vs(nil, Eq("a", "b")); got != `{a="b"}` {
		t.Errorf("no name: %s", got)
	}
}
