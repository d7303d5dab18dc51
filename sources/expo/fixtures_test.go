package expo

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// cleanFixtures are well-formed text bodies that expfmt parses on its own.
var cleanFixtures = []string{
	"sglang-worker-large.prom",
	"sglang-f1-2024.prom",
	"sglang-f2-dp-pid.prom",
	"sglang-f3-pd.prom",
	"sglang-f4-kv-gauge.prom",
	"sglang-f4-kv-histogram.prom",
	"gateway-g1-summary.prom",
	"gateway-g3-empty-families.prom",
	"gateway-smg.prom",
	"gateway-engine-metrics.prom",
	"vllm-created.prom",
}

// On a clean body, keep-all must give exactly what expfmt gives (labels
// sorted): the pre-pass and rebuild change nothing.
func TestCleanFixturesMatchExpfmt(t *testing.T) {
	for _, name := range cleanFixtures {
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, name)
			p := expfmt.NewTextParser(model.UTF8Validation)
			want, err := p.TextToMetricFamilies(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("fixture does not parse with expfmt: %v", err)
			}
			r := Parse(body, Options{})
			checkSafe(t, r, Options{})
			if r.Stats.ProblemCount != 0 || r.Stats.Dropped != 0 || len(r.Stats.Warnings) != 0 {
				t.Fatalf("stats %+v", r.Stats)
			}
			if len(r.Families) != len(want) {
				t.Fatalf("%d families, expfmt has %d", len(r.Families), len(want))
			}
			for fam, w := range want {
				for _, m := range w.Metric {
					sortLabels(m.Label)
				}
				if !proto.Equal(w, r.Families[fam]) {
					t.Fatalf("family %s differs:\n got %v\nwant %v", fam, r.Families[fam], w)
				}
			}
		})
	}
}

func TestKeepFiltersFamiliesBeforeParsing(t *testing.T) {
	body := readFixture(t, "sglang-worker-large.prom")
	all := Parse(body, Options{})

	var mu sync.Mutex
	calls := map[string]int{}
	keep := panelKeep()
	r := Parse(body, Options{Keep: func(name string) bool {
		mu.Lock()
		calls[name]++
		mu.Unlock()
		return keep(name)
	}})
	checkSafe(t, r, Options{})

	if len(calls) != len(all.Families) {
		t.Fatalf("Keep asked about %d names, body has %d families", len(calls), len(all.Families))
	}
	for name, n := range calls {
		if n != 1 {
			t.Fatalf("Keep(%q) called %d times", name, n)
		}
	}
	kept := 0
	for fam := range all.Families {
		if !keep(fam) {
			if _, ok := r.Families[fam]; ok {
				t.Fatalf("family %s kept although Keep rejected it", fam)
			}
			continue
		}
		kept++
		if !proto.Equal(all.Families[fam], r.Families[fam]) {
			t.Fatalf("family %s differs between keep-all and keep-panels", fam)
		}
	}
	if r.Stats.Families != kept || r.Stats.Skipped != len(all.Families)-kept {
		t.Fatalf("families %d skipped %d; want %d and %d", r.Stats.Families, r.Stats.Skipped, kept, len(all.Families)-kept)
	}
	if len(r.Declared) != len(all.Declared) || len(r.Declared) != 75 {
		t.Fatalf("declared %d names, keep-all %d", len(r.Declared), len(all.Declared))
	}
}

// Python's text writer emits <name>_created as gauge families of their
// own; they follow their base family through Keep.
func TestCreatedFamiliesFollowTheirBase(t *testing.T) {
	body := readFixture(t, "vllm-created.prom")
	want := map[string]bool{"vllm:prompt_tokens_total": true, "vllm:time_to_first_token_seconds": true}
	r := Parse(body, Options{Keep: func(n string) bool { return want[n] }})
	checkSafe(t, r, Options{})
	got := familyNames(r)
	slices.Sort(got)
	if strings.Join(got, " ") != "vllm:prompt_tokens_created vllm:prompt_tokens_total vllm:time_to_first_token_seconds vllm:time_to_first_token_seconds_created" {
		t.Fatalf("families %v", got)
	}
	if r.Families["vllm:time_to_first_token_seconds_created"].GetType() != dto.MetricType_GAUGE {
		t.Fatal("_created is not a gauge")
	}
	if r.Stats.Skipped != 3 {
		t.Fatalf("skipped %d, want 3 (gpu_prefix_cache_queries_total/_created, num_requests_running)", r.Stats.Skipped)
	}
}

// A target that ignores Accept and sends OpenMetrics is parsed on the text
// path: foo_total becomes the counter, foo_created a gauge, exemplars go.
func TestOpenMetricsBodyOnTheTextPath(t *testing.T) {
	body := readFixture(t, "openmetrics-python.prom")
	r := Parse(body, Options{})
	checkSafe(t, r, Options{})
	if !r.OpenMetrics {
		t.Fatal("OpenMetrics not detected")
	}
	wantWarning(t, r, "target ignores Accept (OpenMetrics body)")
	wantWarning(t, r, "exemplars ignored")
	if hasWarning(r, "possibly truncated") || r.Stats.ProblemCount != 0 {
		t.Fatalf("warnings %q problems %+v", r.Stats.Warnings, r.Stats.Problems)
	}
	if mf := r.Families["sglang:prompt_tokens_total"]; mf.GetType() != dto.MetricType_COUNTER || mf.GetHelp() != "Number of prefill tokens processed." {
		t.Fatalf("counter family %v", mf)
	}
	wantValues(t, r, "sglang:prompt_tokens_total", map[string]float64{"model_name=m": 8128})
	wantValues(t, r, "sglang:prompt_tokens_created", map[string]float64{"model_name=m": 1.7637e9})
	wantValues(t, r, "sglang:time_to_first_token_seconds_created", map[string]float64{"model_name=m": 1.7637e9})
	wantValues(t, r, "sglang:build_info", map[string]float64{"version=0.5.9": 1})
	if got := bucketCounts(onlyHistogram(t, r, "sglang:time_to_first_token_seconds")); got != "0.1:3 +Inf:5" {
		t.Fatalf("buckets %s", got)
	}
	if !slices.Equal(r.Declared, []string{"sglang:prompt_tokens", "sglang:num_running_reqs", "sglang:time_to_first_token_seconds", "sglang:build"}) {
		t.Fatalf("declared %v", r.Declared)
	}
	// Asking for the name a dashboard knows (…_total) keeps the counter and
	// its _created start time.
	r = Parse(body, Options{Keep: func(n string) bool { return n == "sglang:prompt_tokens_total" }})
	if got := familyNames(r); len(got) != 2 || r.Families["sglang:prompt_tokens_total"] == nil || r.Families["sglang:prompt_tokens_created"] == nil {
		t.Fatalf("families %v", got)
	}
}

// robustness.md §7: a model_name carrying an OSC title, CSI 2J, an 8-bit
// C1 CSI, CR + fake OK and a bidi override comes out as visible escapes.
func TestHostileLabelsAreSanitised(t *testing.T) {
	r := Parse(readFixture(t, "hostile-labels.prom"), Options{})
	checkSafe(t, r, Options{})
	wantValues(t, r, "sglang:num_running_reqs", map[string]float64{
		`model_name=\x1b]0;pwned\x07m1`:              1,
		`model_name=\x1b[2J\x1b[Hm2`:                 2,
		`model_name=\x9b2Jm3`:                        3,
		`model_name=m4\rOK  healthy`:                 4,
		`model_name=m5\u202etxt.exe`:                 5,
		`model_name=m6\nsglang:num_running_reqs 999`: 6,
	})
	if h := r.Families["sglang:num_running_reqs"].GetHelp(); h != `The number of running requests.\x1b[31m red` {
		t.Fatalf("help %q", h)
	}
}

func TestHTMLPageIsNotMetrics(t *testing.T) {
	r := Parse(readFixture(t, "html-login.prom"), Options{})
	checkSafe(t, r, Options{})
	if len(r.Families) != 0 || r.Stats.ProblemCount != 10 {
		t.Fatalf("families %v, %d problems", familyNames(r), r.Stats.ProblemCount)
	}
	wantWarning(t, r, "body looks like HTML")
	if p := r.Stats.Problems[0]; p.Line != 1 || p.Excerpt != "<!DOCTYPE html>" {
		t.Fatalf("first problem %+v", p)
	}
}

// gateway.md §11 G3: families declared with no samples are in Declared
// although expfmt drops them.
func TestDeclaredIncludesEmptyFamilies(t *testing.T) {
	r := Parse(readFixture(t, "gateway-g3-empty-families.prom"), Options{})
	if !slices.Equal(r.Declared, []string{"sgl_router_requests_total", "sgl_router_overlap_blocks", "sgl_router_active_load"}) {
		t.Fatalf("declared %v", r.Declared)
	}
	if got := familyNames(r); len(got) != 1 || got[0] != "sgl_router_requests_total" {
		t.Fatalf("families %v", got)
	}
}

// gateway.md §11 G1: a summary cut off before _sum/_count keeps its
// quantiles and leaves sum and count unset.
func TestSummaryWithoutSumAndCount(t *testing.T) {
	r := Parse(readFixture(t, "gateway-g1-summary.prom"), Options{})
	mf := r.Families["sgl_router_generate_duration_seconds"]
	if mf.GetType() != dto.MetricType_SUMMARY || len(mf.Metric) != 1 {
		t.Fatalf("family %v", mf)
	}
	s := mf.Metric[0].Summary
	if len(s.Quantile) != 3 || s.SampleCount != nil || s.SampleSum != nil || labelsOf(mf.Metric[0]) != "route=/v1/chat/completions" {
		t.Fatalf("summary %v", mf.Metric[0])
	}
}

func TestSeriesCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE a gauge\n")
	for i := range 5 {
		fmt.Fprintf(&b, "a{i=\"%d\"} %d\n", i, i)
	}
	b.WriteString("# TYPE h histogram\n")
	for i := range 3 {
		fmt.Fprintf(&b, "h_bucket{i=\"%d\",le=\"+Inf\"} 1\nh_count{i=\"%d\"} 1\nh_sum{i=\"%d\"} 1\n", i, i, i)
	}
	b.WriteString("# TYPE c gauge\nc 1\n")
	opt := Options{MaxSeries: 6}
	r := Parse([]byte(b.String()), opt)
	checkSafe(t, r, opt)
	if r.Stats.Series != 6 || r.Stats.Dropped != 3 {
		t.Fatalf("series %d dropped %d; want 6 and 3", r.Stats.Series, r.Stats.Dropped)
	}
	if len(r.Families["a"].Metric) != 5 || len(r.Families["h"].Metric) != 1 || r.Families["c"] != nil {
		t.Fatalf("families %v", r.Families)
	}
	wantWarning(t, r, "series cap of 6 reached: 3 series dropped")
}

// Only the MaxProblems problems with the lowest line numbers are kept,
// whatever order they were found in; all are counted.
func TestProblemsKeepTheLowestLines(t *testing.T) {
	body := "# TYPE a gauge\n" + // 1
		"a{x=\"1\"} 1\n" + //     2
		"# TYPE b gauge\n" + //   3
		"b{x=\"1\"} bad\n" + //   4
		"b{x=\"2\"} bad\n" + //   5
		"a{x=\"2\"} bad\n" + //   6: family a's block is recovered first
		"a{x=\"3\"} bad\n" //     7
	opt := Options{MaxProblems: 2}
	r := Parse([]byte(body), opt)
	checkSafe(t, r, opt)
	if got := problemLines(r); !slices.Equal(got, []int{4, 5}) || r.Stats.ProblemCount != 4 {
		t.Fatalf("problem lines %v count %d", got, r.Stats.ProblemCount)
	}
}

// Recovery parses each byte a bounded number of times: a body whose
// every other family is broken costs a constant multiple of its size
// (plus bufio's 4 KiB read-ahead per failed attempt), not its square.
func TestRecoveryIsLinear(t *testing.T) {
	const n = 2000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "# TYPE good_%d gauge\ngood_%d{model_name=\"m\"} %d\n", i, i, i)
		fmt.Fprintf(&b, "# TYPE bad_%d gauge\nbad_%d{model_name=\"m\"} oops\n", i, i)
	}
	body := []byte(b.String())
	r, parsed := run(body, Options{})
	if r.Stats.Families != n || r.Stats.ProblemCount != n {
		t.Fatalf("families %d problems %d", r.Stats.Families, r.Stats.ProblemCount)
	}
	if limit := 8*len(body) + 4096*n; parsed > limit {
		t.Fatalf("expfmt read %d bytes of a %d-byte body (limit %d)", parsed, len(body), limit)
	}
	t.Logf("expfmt read %d bytes for a %d-byte body (%.1f×)", parsed, len(body), float64(parsed)/float64(len(body)))
}

func TestParseIsSafeForConcurrentUse(t *testing.T) {
	body := readFixture(t, "sglang-worker-large.prom")
	want := Parse(body, Options{Keep: panelKeep()})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				got := Parse(body, Options{Keep: panelKeep()})
				if len(got.Families) != len(want.Families) {
					t.Errorf("got %d families, want %d", len(got.Families), len(want.Families))
					return
				}
				for name, mf := range want.Families {
					if !proto.Equal(mf, got.Families[name]) {
						t.Errorf("family %s differs", name)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// Every fixture, whatever its shape, gives a safe, consistent result.
func TestAllFixturesAreSafe(t *testing.T) {
	files, err := filepath.Glob("testdata/*.prom")
	if err != nil || len(files) < 10 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, f := range files {
		body := readFixture(t, filepath.Base(f))
		for _, opt := range []Options{{}, {Keep: panelKeep(), MaxSeries: 10, MaxProblems: 2}} {
			checkSafe(t, Parse(body, opt), opt)
		}
	}
}
