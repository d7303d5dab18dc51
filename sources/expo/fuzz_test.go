package expo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever it returns
// is safe to draw: printable names, sanitised labels, HELP and problems,
// consistent counts, caps respected, deterministic output. It is seeded
// with the testdata fixtures; testdata/fuzz/FuzzParse holds small edge
// cases (seed-*) and past findings (hash names).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.prom")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil && len(b) < 16<<10 {
			f.Add(b)
		}
	}
	keepSome := func(name string) bool { return strings.ContainsAny(name, "aeiou") }
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := string(body)
		for _, opt := range []Options{{}, {Keep: keepSome, MaxSeries: 7, MaxProblems: 3}} {
			r := Parse(body, opt)
			checkSafe(t, r, opt)
			again := Parse(body, opt)
			if again.Stats.Series != r.Stats.Series || again.Stats.ProblemCount != r.Stats.ProblemCount ||
				len(again.Stats.Warnings) != len(r.Stats.Warnings) {
				t.Fatalf("not deterministic: %+v vs %+v", r.Stats, again.Stats)
			}
		}
		if string(body) != orig {
			t.Fatal("Parse modified its input")
		}
	})
}
