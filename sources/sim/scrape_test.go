package sim

import (
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The tests judge the fleet only by what it serves: they scrape its
// endpoints over loopback and parse the text exposition, as pdtop does.

var testClient = &http.Client{Timeout: 10 * time.Second}

// families is one parsed /metrics body.
type families map[string]*dto.MetricFamily

func get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := testClient.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, b
}

func parse(t testing.TB, body []byte) families {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	return fams
}

func scrapeOne(t testing.TB, url string) families {
	t.Helper()
	code, body := get(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, code)
	}
	return parse(t, body)
}

// snapshot is one scrape of every endpoint, by endpoint name.
type snapshot map[string]families

func scrapeAll(t testing.TB, eps []Endpoint) snapshot {
	t.Helper()
	s := snapshot{}
	for _, e := range eps {
		s[e.Name] = scrapeOne(t, e.MetricsURL)
	}
	return s
}

func labelsMatch(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k {
				found = l.GetValue() == v
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// sum adds the samples of a family whose labels match (absent family = 0).
func (fs families) sum(name string, match map[string]string) float64 {
	total := 0.0
	if f := fs[name]; f != nil {
		for _, m := range f.GetMetric() {
			if labelsMatch(m, match) {
				total += value(m)
			}
		}
	}
	return total
}

// label returns the value of one label of the first matching sample.
func (fs families) label(name, label string, match map[string]string) string {
	if f := fs[name]; f != nil {
		for _, m := range f.GetMetric() {
			if labelsMatch(m, match) {
				for _, l := range m.GetLabel() {
					if l.GetName() == label {
						return l.GetValue()
					}
				}
			}
		}
	}
	return ""
}

// histo is a histogram merged over matching series.
type histo struct {
	bounds []float64
	counts []float64 // cumulative
	sum    float64
	count  float64
}

func (fs families) hist(name string, match map[string]string) histo {
	var h histo
	f := fs[name]
	if f == nil {
		return h
	}
	for _, m := range f.GetMetric() {
		if !labelsMatch(m, match) || m.Histogram == nil {
			continue
		}
		hh := m.Histogram
		if h.bounds == nil {
			for _, b := range hh.GetBucket() {
				h.bounds = append(h.bounds, b.GetUpperBound())
			}
			h.counts = make([]float64, len(h.bounds))
		}
		for i, b := range hh.GetBucket() {
			h.counts[i] += float64(b.GetCumulativeCount())
		}
		h.sum += hh.GetSampleSum()
		h.count += float64(hh.GetSampleCount())
	}
	return h
}

// minus is the histogram of the observations between two scrapes.
func (h histo) minus(o histo) histo {
	d := histo{bounds: h.bounds, sum: h.sum - o.sum, count: h.count - o.count}
	d.counts = make([]float64, len(h.counts))
	for i := range h.counts {
		d.counts[i] = h.counts[i]
		if i < len(o.counts) {
			d.counts[i] -= o.counts[i]
		}
	}
	return d
}

func (h histo) mean() float64 {
	if h.count == 0 {
		return 0
	}
	return h.sum / h.count
}

// quantile interpolates linearly inside the bucket, as histogram_quantile
// does (+Inf: the highest finite bound).
func (h histo) quantile(q float64) float64 {
	if h.count == 0 || len(h.bounds) == 0 {
		return 0
	}
	rank := q * h.count
	i := sort.Search(len(h.counts), func(i int) bool { return h.counts[i] >= rank })
	if i >= len(h.bounds) {
		return h.bounds[len(h.bounds)-1]
	}
	lo, prev := 0.0, 0.0
	if i > 0 {
		lo, prev = h.bounds[i-1], h.counts[i-1]
	}
	if math.IsInf(h.bounds[i], 1) {
		return lo
	}
	if h.counts[i] == prev {
		return h.bounds[i]
	}
	return lo + (h.bounds[i]-lo)*(rank-prev)/(h.counts[i]-prev)
}

// pool helpers over a snapshot.

func names(eps []Endpoint, prefix string) []string {
	var out []string
	for _, e := range eps {
		if strings.HasPrefix(e.Name, prefix) {
			out = append(out, e.Name)
		}
	}
	return out
}

// poolSum sums a family over every endpoint whose name has prefix.
func (s snapshot) poolSum(prefix, name string, match map[string]string) float64 {
	total := 0.0
	for n, fs := range s {
		if strings.HasPrefix(n, prefix) {
			total += fs.sum(name, match)
		}
	}
	return total
}

func (s snapshot) poolHist(prefix, name string, match map[string]string) histo {
	var h histo
	for _, n := range sortedKeys(s) {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		x := s[n].hist(name, match)
		if x.bounds == nil {
			continue
		}
		if h.bounds == nil {
			h = histo{bounds: x.bounds, counts: make([]float64, len(x.counts))}
		}
		for i := range x.counts {
			h.counts[i] += x.counts[i]
		}
		h.sum += x.sum
		h.count += x.count
	}
	return h
}

func sortedKeys(s snapshot) []string {
	var ks []string
	for k := range s {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// hitRatio is Δcached ÷ Δprompt between two scrapes over matching targets:
// the workers' actual prefix-hit ratio.
func hitRatio(before, after snapshot, prefix string) float64 {
	dc := after.poolSum(prefix, "sglang:cached_tokens_total", nil) - before.poolSum(prefix, "sglang:cached_tokens_total", nil)
	dp := after.poolSum(prefix, "sglang:prompt_tokens_total", nil) - before.poolSum(prefix, "sglang:prompt_tokens_total", nil)
	if dp <= 0 {
		return math.NaN()
	}
	return dc / dp
}

// serveFleet builds and serves a fleet on loopback and closes it with the
// test.
func serveFleet(t testing.TB, cfg Config) (*Fleet, []Endpoint) {
	t.Helper()
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := f.Serve("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f, eps
}
