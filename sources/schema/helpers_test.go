package schema

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
)

// parseBody parses an exposition body the way the tests are told to (the
// project parser is written elsewhere) and lists the names of its TYPE
// lines, which expfmt drops for families without samples.
func parseBody(t testing.TB, body []byte) (map[string]*dto.MetricFamily, []string) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var declared []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			declared = append(declared, f[2])
		}
	}
	return fams, declared
}

// load parses testdata/<file>.
func load(t testing.TB, file string) (map[string]*dto.MetricFamily, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return parseBody(t, b)
}

// mapFile loads a fixture and maps it.
func mapFile(t testing.TB, file string) *sources.Observation {
	t.Helper()
	fams, declared := load(t, file)
	return Map(fams, declared)
}

// pk names a keyed point in expectations.
type pk struct {
	sig sources.Signal
	key string
}

// points returns the observation's points by signal and key, failing on a
// repeated (signal, key).
func points(t *testing.T, obs *sources.Observation) map[pk]float64 {
	t.Helper()
	out := make(map[pk]float64, len(obs.Points))
	for _, p := range obs.Points {
		k := pk{p.Signal, p.Key}
		if _, dup := out[k]; dup {
			t.Errorf("point %v key %q emitted twice", p.Signal, p.Key)
		}
		out[k] = p.Value
	}
	return out
}

// wantPoints checks that the observation has exactly the expected points:
// values equal (to 1e-9 relative), nothing missing, nothing extra.
func wantPoints(t *testing.T, obs *sources.Observation, want map[pk]float64) {
	t.Helper()
	got := points(t, obs)
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%v[%q]: absent, want %v", k.sig, k.key, w)
		case !near(g, w):
			t.Errorf("%v[%q] = %v, want %v (source %q)", k.sig, k.key, g, w, obs.Sources[k.sig])
		}
	}
	var extra []string
	for k, g := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k.sig.String()+"["+k.key+"]="+fmtF(g))
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("unexpected points: %s", strings.Join(extra, ", "))
	}
}

// wantHist describes an expected Hist; nil Bounds means "no buckets".
type wantHist struct {
	bounds, counts []float64
	sum, count     float64
}

// wantHists checks that the observation has exactly the expected hists.
func wantHists(t *testing.T, obs *sources.Observation, want map[sources.Signal]wantHist) {
	t.Helper()
	seen := map[sources.Signal]bool{}
	for _, h := range obs.Hists {
		if seen[h.Signal] {
			t.Errorf("hist %v emitted twice", h.Signal)
		}
		seen[h.Signal] = true
		w, ok := want[h.Signal]
		if !ok {
			t.Errorf("unexpected hist %v (source %q)", h.Signal, obs.Sources[h.Signal])
			continue
		}
		if !near(h.Sum, w.sum) || !near(h.Count, w.count) {
			t.Errorf("hist %v sum/count = %v/%v, want %v/%v", h.Signal, h.Sum, h.Count, w.sum, w.count)
		}
		if !floatsEqual(h.Bounds, w.bounds) || !floatsEqual(h.Counts, w.counts) {
			t.Errorf("hist %v buckets\n got %v / %v\nwant %v / %v", h.Signal, h.Bounds, h.Counts, w.bounds, w.counts)
		}
	}
	for sig := range want {
		if !seen[sig] {
			t.Errorf("hist %v absent", sig)
		}
	}
}

// wantSources checks Sources for the listed signals.
func wantSources(t *testing.T, obs *sources.Observation, want map[sources.Signal]string) {
	t.Helper()
	for sig, w := range want {
		if g := obs.Sources[sig]; g != w {
			t.Errorf("Sources[%v] = %q, want %q", sig, g, w)
		}
	}
}

// checkSourcesMatch checks that Sources has an entry for exactly the
// signals that have points or hists.
func checkSourcesMatch(t *testing.T, obs *sources.Observation) {
	t.Helper()
	present := map[sources.Signal]bool{}
	for _, p := range obs.Points {
		present[p.Signal] = true
	}
	for _, h := range obs.Hists {
		present[h.Signal] = true
	}
	for sig := range present {
		if obs.Sources[sig] == "" {
			t.Errorf("signal %v present without a source", sig)
		}
	}
	for sig, name := range obs.Sources {
		if !present[sig] {
			t.Errorf("source %v=%q for an absent signal", sig, name)
		}
	}
}

func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

var inf = math.Inf(1)

func readFixture(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mapBody(t testing.TB, body []byte) *sources.Observation {
	t.Helper()
	fams, declared := parseBody(t, body)
	return Map(fams, declared)
}

func bytesReplace(b []byte, old, new string) []byte {
	return bytes.ReplaceAll(b, []byte(old), []byte(new))
}
