package expo

import (
	"math"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestInputRows covers the parsing rows of robustness.md §2–§3, one row
// per input shape.
func TestInputRows(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		opt   Options
		check func(t *testing.T, r Result)
	}{
		{
			name: "§3.1 malformed lines are problems with their line numbers, good lines kept",
			body: "# TYPE g gauge\n" + //                    1
				`g{a="1"} 1` + "\n" + //                     2
				`g{a='2'} 2` + "\n" + //                     3 single-quoted value
				`g{a="3"} true` + "\n" + //                  4 value "true"
				`g{a="4"}` + "\n" + //                       5 missing value
				`g{a="5" 5` + "\n" + //                      6 unterminated labels
				`{a="6"} 6` + "\n" + //                      7 empty name
				`g{a="7"} 7` + "\n", //                      8
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "g", map[string]float64{"a=1": 1, "a=7": 7})
				wantProblemLines(t, r, 3, 4, 5, 6, 7)
				if p := r.Stats.Problems[0]; !strings.Contains(p.Message, `expected '"'`) || p.Excerpt != `g{a='2'} 2` {
					t.Fatalf("problem on line 3: %+v", p)
				}
			},
		},
		{
			name: "§3.2 a failed strict parse never yields invented zeros",
			body: "# TYPE a gauge\n" +
				`a{x="1"} 1` + "\n" +
				`a{x="2"} 0x1p-3` + "\n" + // expfmt's partial map has this series with no value
				`a{x="3"} 3` + "\n" +
				"# TYPE b_total counter\n" +
				"b_total 5\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"x=1": 1, "x=3": 3})
				wantValues(t, r, "b_total", map[string]float64{"": 5})
				wantProblemLines(t, r, 3)
				if !strings.Contains(r.Stats.Problems[0].Message, "expected float") {
					t.Fatalf("message: %q", r.Stats.Problems[0].Message)
				}
			},
		},
		{
			name: "§3.3 repeated # TYPE and # HELP are dropped with one warning",
			body: "# HELP a first help\n# TYPE a gauge\n# TYPE a gauge\na 1\n# HELP a second help\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"": 1})
				if h := r.Families["a"].GetHelp(); h != "first help" {
					t.Fatalf("help %q", h)
				}
				if r.Stats.ProblemCount != 0 {
					t.Fatalf("problems: %+v", r.Stats.Problems)
				}
				wantWarning(t, r, "repeated # TYPE/# HELP for a dropped (+1 more)")
			},
		},
		{
			name: "§3.3 a conflicting # TYPE is a problem; the first type stays",
			body: "# TYPE c counter\nc 1\n# TYPE c gauge\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "c", map[string]float64{"": 1})
				if r.Families["c"].GetType() != dto.MetricType_COUNTER {
					t.Fatalf("type %v", r.Families["c"].GetType())
				}
				wantProblemLines(t, r, 3)
			},
		},
		{
			name: "§3.3 a family split over two blocks is merged; line numbers stay original",
			body: "# HELP sglang:num_running_reqs The number of running requests.\n" + // 1
				"# TYPE sglang:num_running_reqs gauge\n" + //                            2
				`sglang:num_running_reqs{pid="910"} 1.0` + "\n" + //                    3
				"# HELP sglang:token_usage The token usage.\n" + //                     4
				"# TYPE sglang:token_usage gauge\n" + //                                 5
				"sglang:token_usage 0.25\n" + //                                         6
				"# HELP sglang:num_running_reqs The number of running requests.\n" + // 7
				"# TYPE sglang:num_running_reqs gauge\n" + //                            8
				`sglang:num_running_reqs{pid="911"} 2.0` + "\n" + //                    9
				`sglang:num_running_reqs{pid="912"} two` + "\n", //                     10
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "sglang:num_running_reqs", map[string]float64{"pid=910": 1, "pid=911": 2})
				wantValues(t, r, "sglang:token_usage", map[string]float64{"": 0.25})
				wantWarning(t, r, "family sglang:num_running_reqs split over several blocks; merged")
				wantWarning(t, r, "repeated # TYPE/# HELP for sglang:num_running_reqs")
				wantProblemLines(t, r, 10)
			},
		},
		{
			name: "§3.4 duplicate series: the last is kept, counted, never summed",
			body: "# TYPE g gauge\n" +
				`g{a="1",b="2"} 1` + "\n" +
				`g{b="2",a="1"} 2` + "\n" + // same label set, other order
				`g{a="1",b="3"} 3` + "\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "g", map[string]float64{"a=1,b=2": 2, "a=1,b=3": 3})
				if r.Stats.Dropped != 1 {
					t.Fatalf("dropped %d, want 1", r.Stats.Dropped)
				}
				wantWarning(t, r, "duplicate series in g: kept the last (1 dropped)")
			},
		},
		{
			name: "§3.4 a histogram exposed twice keeps the last copy's buckets",
			body: "# TYPE h histogram\n" +
				`h_bucket{le="1"} 1` + "\n" + `h_bucket{le="+Inf"} 2` + "\n" + "h_sum 3\nh_count 2\n" +
				`h_bucket{le="1"} 10` + "\n" + `h_bucket{le="+Inf"} 20` + "\n" + "h_sum 30\nh_count 20\n",
			check: func(t *testing.T, r Result) {
				h := onlyHistogram(t, r, "h")
				if got := bucketCounts(h); got != "1:10 +Inf:20" {
					t.Fatalf("buckets %s", got)
				}
				if h.GetSampleCount() != 20 || h.GetSampleSum() != 30 {
					t.Fatalf("count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
				}
				if r.Stats.Dropped != 1 {
					t.Fatalf("dropped %d, want 1", r.Stats.Dropped)
				}
			},
		},
		{
			name: "§3.5 histogram without +Inf is parsed as is",
			body: "# TYPE h histogram\n" + `h_bucket{le="0.1"} 1` + "\n" + `h_bucket{le="1"} 3` + "\n" + "h_count 4\nh_sum 2.5\n",
			check: func(t *testing.T, r Result) {
				h := onlyHistogram(t, r, "h")
				if got := bucketCounts(h); got != "0.1:1 1:3" {
					t.Fatalf("buckets %s", got)
				}
				if h.SampleCount == nil || h.GetSampleCount() != 4 {
					t.Fatalf("count %v", h.SampleCount)
				}
			},
		},
		{
			name: "§3.6 non-monotonic buckets are parsed as is (the store clamps)",
			body: "# TYPE h histogram\n" + `h_bucket{le="1"} 5` + "\n" + `h_bucket{le="2"} 3` + "\n" + `h_bucket{le="+Inf"} 7` + "\n" + "h_count 7\nh_sum 9\n",
			check: func(t *testing.T, r Result) {
				if got := bucketCounts(onlyHistogram(t, r, "h")); got != "1:5 2:3 +Inf:7" {
					t.Fatalf("buckets %s", got)
				}
			},
		},
		{
			name: "§3.5 a histogram line lost to a problem leaves the field unset, not zero",
			body: "# TYPE h histogram\n" + `h_bucket{le="1"} 1` + "\n" + `h_bucket{le="+Inf"} 2` + "\n" + "h_sum 3\nh_count two\n",
			check: func(t *testing.T, r Result) {
				h := onlyHistogram(t, r, "h")
				if h.SampleCount != nil || h.SampleCountFloat != nil {
					t.Fatalf("count invented: %v", h)
				}
				wantProblemLines(t, r, 5)
			},
		},
		{
			name: "a gauge named like a histogram's _count neither steals its lines nor breaks its TYPE",
			body: "# TYPE foo_count gauge\nfoo_count 3\n" +
				"# TYPE foo histogram\n" + `foo_bucket{le="+Inf"} 5` + "\nfoo_count 5\nfoo_sum 1\n" +
				"# TYPE bar histogram\n" + `bar_bucket{le="+Inf"} 2` + "\nbar_count 2\nbar_sum 1\n" +
				"# TYPE bar_sum gauge\nbar_sum 7\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "foo_count", map[string]float64{"": 3})
				wantValues(t, r, "bar_sum", map[string]float64{"": 7})
				if h := onlyHistogram(t, r, "foo"); h.GetSampleCount() != 5 || bucketCounts(h) != "+Inf:5" {
					t.Fatalf("foo %v", h)
				}
				if h := onlyHistogram(t, r, "bar"); h.GetSampleSum() != 1 || h.GetSampleCount() != 2 {
					t.Fatalf("bar %v", h)
				}
				if r.Stats.ProblemCount != 0 || r.Stats.Dropped != 0 {
					t.Fatalf("stats %+v", r.Stats)
				}
			},
		},
		{
			name: "§3.7 le and quantile are keyed by their float value, however spelled",
			body: "# TYPE h histogram\n" +
				`h_bucket{le="0.5"} 1` + "\n" + `h_bucket{le="1"} 2` + "\n" + `h_bucket{le="1.0"} 3` + "\n" +
				`h_bucket{le="+inf"} 4` + "\n" + "h_count 4\nh_sum 2\n" +
				"# TYPE s summary\n" + `s{quantile="0"} 0.1` + "\n" + `s{quantile="0.0"} 0.2` + "\n" + "s_count 1\ns_sum 1\n",
			check: func(t *testing.T, r Result) {
				// "1" and "1.0" are the same bound: one bucket, the last value.
				if got := bucketCounts(onlyHistogram(t, r, "h")); got != "0.5:1 1:3 +Inf:4" {
					t.Fatalf("buckets %s", got)
				}
				q := r.Families["s"].Metric[0].Summary.Quantile
				if len(q) != 1 || q[0].GetQuantile() != 0 || q[0].GetValue() != 0.2 {
					t.Fatalf("quantiles %v", q)
				}
			},
		},
		{
			name: "bad lines inside a histogram cost only those lines; the series stays whole",
			body: "# TYPE h histogram\n" + //                  1
				`h_bucket{le="1",m="a"} 1` + "\n" + //       2
				`h_bucket{le="2",m="a"} x` + "\n" + //       3 bad
				`h_bucket{le="5",m="a"} 3` + "\n" + //       4
				`h_bucket{le="+Inf",m="a"} y` + "\n" + //    5 bad
				`h_count{m="a"} 4` + "\n" + //               6
				`h_sum{m="a"} 1e400` + "\n", //              7 repaired to +Inf
			check: func(t *testing.T, r Result) {
				h := onlyHistogram(t, r, "h")
				if got := bucketCounts(h); got != "1:1 5:3" || h.GetSampleCount() != 4 || !math.IsInf(h.GetSampleSum(), 1) {
					t.Fatalf("histogram %v", h)
				}
				wantProblemLines(t, r, 3, 5)
				wantWarning(t, r, "(line 7)")
			},
		},
		{
			name: "§3.8 NaN and ±Inf in every spelling",
			body: "# TYPE g gauge\n" +
				`g{v="a"} NaN` + "\n" + `g{v="b"} nan` + "\n" + `g{v="c"} +Inf` + "\n" +
				`g{v="d"} inf` + "\n" + `g{v="e"} -Inf` + "\n" + `g{v="f"} -infinity` + "\n",
			check: func(t *testing.T, r Result) {
				inf := math.Inf(1)
				wantValues(t, r, "g", map[string]float64{
					"v=a": math.NaN(), "v=b": math.NaN(), "v=c": inf, "v=d": inf, "v=e": -inf, "v=f": -inf,
				})
				if r.Stats.ProblemCount != 0 {
					t.Fatalf("problems: %+v", r.Stats.Problems)
				}
			},
		},
		{
			name: "§3.9 odd floats: overflow → ±Inf with a warning; hex and 1_2 are problems",
			body: "# TYPE g gauge\n" +
				`g{v="a"} 1.5e+3` + "\n" + `g{v="b"} 1E-3` + "\n" + //  2, 3
				`g{v="c"} 1e400` + "\n" + `g{v="d"} -1e400` + "\n" + // 4, 5
				`g{v="e"} 0x1p-3` + "\n" + `g{v="f"} 1_2` + "\n" + //   6, 7
				`g{v="g"} 1e-400` + "\n", //                             8: underflow is plain 0
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "g", map[string]float64{
					"v=a": 1500, "v=b": 0.001, "v=c": math.Inf(1), "v=d": math.Inf(-1), "v=g": 0,
				})
				wantProblemLines(t, r, 6, 7)
				wantWarning(t, r, "value out of float64 range read as ±Inf (line 4) (+1 more)")
			},
		},
		{
			name: "§3.17 missing final newline is tolerated with a warning",
			body: "# TYPE a gauge\na 1",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"": 1})
				wantWarning(t, r, "missing final newline")
			},
		},
		{
			name: "§3.17 CRLF line endings are tolerated with a warning",
			body: "# HELP a help\r\n# TYPE a gauge\r\na{x=\"1\"} 1\r\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"x=1": 1})
				if h := r.Families["a"].GetHelp(); h != "help" {
					t.Fatalf("help %q", h)
				}
				wantWarning(t, r, "CRLF")
			},
		},
		{
			name: "§3.16 # EOF ends the body; what follows is ignored",
			body: "# TYPE a gauge\na 1\n# EOF\nb 2\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"": 1})
				if _, ok := r.Families["b"]; ok || !r.OpenMetrics {
					t.Fatalf("families %v, OpenMetrics %v", familyNames(r), r.OpenMetrics)
				}
				wantWarning(t, r, "target ignores Accept (OpenMetrics body)")
				wantWarning(t, r, "data after # EOF ignored")
			},
		},
		{
			name: "§3.16 OpenMetrics markers without # EOF: possibly truncated",
			body: "# TYPE a gauge\n# UNIT a seconds\na 1\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"": 1})
				wantWarning(t, r, "possibly truncated")
			},
		},
		{
			name: "§3.13 invalid UTF-8 in a label value becomes U+FFFD, counted",
			body: "# TYPE g gauge\ng{m=\"a\xffb\"} 1\ng{m=\"ok\"} 2\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "g", map[string]float64{"m=a\uFFFDb": 1, "m=ok": 2})
				wantWarning(t, r, "invalid UTF-8 replaced with U+FFFD on 1 line(s)")
			},
		},
		{
			name: "§3.14 quoted UTF-8 names and colon names are normalised to the plain name",
			body: `{"sglang:foo", model_name="m"} 1` + "\n" +
				`"sglang:bar"{model_name="m"} 2` + "\n" +
				"# TYPE \"my.metric\" gauge\n" + `{"my.metric"} 3` + "\n" +
				`sglang:baz{model_name="m"} 4` + "\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "sglang:foo", map[string]float64{"model_name=m": 1})
				wantValues(t, r, "sglang:bar", map[string]float64{"model_name=m": 2})
				wantValues(t, r, "my.metric", map[string]float64{"": 3})
				wantValues(t, r, "sglang:baz", map[string]float64{"model_name=m": 4})
				if r.Families["my.metric"].GetType() != dto.MetricType_GAUGE {
					t.Fatalf("my.metric type %v", r.Families["my.metric"].GetType())
				}
			},
		},
		{
			name: "§3.10 escaped label values are unescaped, then a newline is shown as \\n",
			body: `g{a="q\"b\\c\nd}#e"} 1` + "\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "g", map[string]float64{`a=q"b\c\nd}#e`: 1})
			},
		},
		{
			name: "§3.11 raw control characters in labels and HELP become visible escapes",
			body: "# HELP g bell\x07here\n# TYPE g gauge\n" +
				"g{a=\"x\x1b]0;t\x07y\",\"odd\x1bname\"=\"v\"} 1\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "g", map[string]float64{`a=x\x1b]0;t\x07y,odd\x1bname=v`: 1})
				if h := r.Families["g"].GetHelp(); h != `bell\x07here` {
					t.Fatalf("help %q", h)
				}
			},
		},
		{
			name: "§3.12 a metric name that is not printable is dropped as a problem",
			body: "{\"evil\x1b[2J\"} 1\nok 2\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "ok", map[string]float64{"": 2})
				if len(r.Families) != 1 || r.Stats.Dropped != 1 {
					t.Fatalf("families %v, dropped %d", familyNames(r), r.Stats.Dropped)
				}
				wantProblemLines(t, r, 1)
				if m := r.Stats.Problems[0].Message; !strings.Contains(m, `evil\x1b[2J`) {
					t.Fatalf("message %q", m)
				}
			},
		},
		{
			name: "a HELP line with an invalid escape loses only the HELP",
			body: "# HELP a bad \\q escape\n# TYPE a gauge\na 1\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"": 1})
				if r.Families["a"].Help != nil || r.Families["a"].GetType() != dto.MetricType_GAUGE {
					t.Fatalf("family %v", r.Families["a"])
				}
				wantProblemLines(t, r, 1)
			},
		},
		{
			name: "an unknown TYPE is a problem; the family is parsed untyped",
			body: "# TYPE a widget\na 1\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"": 1})
				wantProblemLines(t, r, 1)
				if r.Families["a"].GetType() != dto.MetricType_UNTYPED {
					t.Fatalf("type %v", r.Families["a"].GetType())
				}
			},
		},
		{
			name: "§3.19 exposed timestamps (ms) are kept as exposed",
			body: "a 1 1700000000000\n",
			check: func(t *testing.T, r Result) {
				if ts := r.Families["a"].Metric[0].GetTimestampMs(); ts != 1700000000000 {
					t.Fatalf("timestamp %d", ts)
				}
			},
		},
		{
			name: "blank lines, comments and leading blanks are ignored",
			body: "\n  # a comment\n\n  # TYPE a gauge\n\t a 1\n\n",
			check: func(t *testing.T, r Result) {
				wantValues(t, r, "a", map[string]float64{"": 1})
				if r.Families["a"].GetType() != dto.MetricType_GAUGE || r.Stats.ProblemCount != 0 {
					t.Fatalf("family %v problems %+v", r.Families["a"], r.Stats.Problems)
				}
			},
		},
		{
			name: "empty body",
			body: "",
			check: func(t *testing.T, r Result) {
				if len(r.Families) != 0 || r.Stats.ProblemCount != 0 || len(r.Stats.Warnings) != 0 {
					t.Fatalf("result %+v", r)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.body), tt.opt)
			checkSafe(t, r, tt.opt)
			tt.check(t, r)
		})
	}
}

func onlyHistogram(t *testing.T, r Result, fam string) *dto.Histogram {
	t.Helper()
	mf := r.Families[fam]
	if mf == nil || len(mf.Metric) != 1 || mf.Metric[0].Histogram == nil {
		t.Fatalf("family %q: %v", fam, mf)
	}
	return mf.Metric[0].Histogram
}

// bucketCounts renders buckets as "le:count …".
func bucketCounts(h *dto.Histogram) string {
	var parts []string
	for _, b := range h.Bucket {
		le := formatFloat(b.GetUpperBound())
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		parts = append(parts, le+":"+formatFloat(c))
	}
	return strings.Join(parts, " ")
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
