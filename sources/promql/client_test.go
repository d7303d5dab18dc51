package promql

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
)

// answer is a canned HTTP response of a fake server.
type answer struct {
	status int
	ctype  string
	body   string
	delay  time.Duration
}

func serve(t *testing.T, a answer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.delay > 0 {
			select {
			case <-time.After(a.delay):
			case <-r.Context().Done():
				return
			}
		}
		if a.ctype != "" {
			w.Header().Set("Content-Type", a.ctype)
		}
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testClient(t *testing.T, url string, maxBytes int64) *client {
	t.Helper()
	c, err := newClient(url, &http.Client{}, maxBytes, 5*time.Second, 4)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const vectorOK = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"w1"},"value":[1700000000,"3"]}]}}`

// Every way a query can fail is classified like a target failure, with a
// message that says what to do, the query shown when it was rejected.
func TestQueryFailuresAreClassified(t *testing.T) {
	const q = `sum by (instance) (rate(sglang:prompt_tokens_total[1m]))`
	cases := []struct {
		name    string
		a       answer
		class   sources.ErrorClass
		status  int
		message []string
	}{
		{"400 bad parameters", answer{status: 400, ctype: "application/json",
			body: `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""}`},
			ErrQuery, 400, []string{"bad query", "parse error", "query: sum by (instance)"}},
		{"422 cannot execute", answer{status: 422, ctype: "application/json",
			body: `{"status":"error","errorType":"execution","error":"found duplicate series for the match group"}`},
			ErrQuery, 422, []string{"bad query", "duplicate series", "rate(sglang:prompt_tokens_total[1m])"}},
		{"503 with an API body", answer{status: 503, ctype: "application/json",
			body: `{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`},
			sources.ErrHTTP5xx, 503, []string{"overloaded", "backing off"}},
		{"503 plain", answer{status: 503, body: "Service Unavailable"},
			sources.ErrHTTP5xx, 503, []string{"overloaded", "backing off"}},
		{"401", answer{status: 401, body: "Unauthorized"}, sources.ErrAuth, 401, []string{"credentials"}},
		{"404 HTML", answer{status: 404, ctype: "text/html", body: "<html><title>Grafana</title></html>"},
			sources.ErrHTTP4xx, 404, []string{"no Prometheus API", "wrong URL"}},
		{"500", answer{status: 500, body: "boom"}, sources.ErrHTTP5xx, 500, []string{"HTTP 500"}},
		{"garbage 200", answer{status: 200, ctype: "application/json", body: "<html>login</html>"},
			sources.ErrParse, 200, []string{"not a Prometheus API response"}},
		{"oversize", answer{status: 200, ctype: "application/json", body: vectorOK + strings.Repeat(" ", 4096)},
			sources.ErrOversize, 200, []string{"size cap"}},
		{"hang", answer{status: 200, body: vectorOK, delay: time.Second},
			sources.ErrTimeout, 0, []string{"deadline"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.a)
			c := testClient(t, srv.URL, 1024)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			v, fail := c.instant(ctx, "pool_counters", q, time.Unix(1700000000, 0))
			if fail == nil {
				t.Fatalf("no failure, got %v", v)
			}
			e := fail.err
			if e.Class != tc.class || e.Status != tc.status {
				t.Errorf("class %s status %d, want %s %d (%s)", e.Class, e.Status, tc.class, tc.status, e.Message)
			}
			for _, m := range tc.message {
				if !strings.Contains(e.Message, m) {
					t.Errorf("message %q lacks %q", e.Message, m)
				}
			}
			if fail.query != q {
				t.Errorf("failure keeps query %q", fail.query)
			}
		})
	}
}

func TestRefusedConnection(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, fail := testClient(t, url, 0).instant(context.Background(), "workers", "up", time.Now())
	if fail == nil || fail.err.Class != sources.ErrRefused {
		t.Fatalf("failure %+v", fail)
	}
}

// Warnings on a successful answer are kept (the figures may be partial);
// NaN and ±Inf arrive as JSON strings and never become numbers on screen.
func TestWarningsAndNonFiniteValues(t *testing.T) {
	srv := serve(t, answer{status: 200, ctype: "application/json", body: `{"status":"success","warnings":["store eu-1 unavailable: partial response"],` +
		`"data":{"resultType":"vector","result":[` +
		`{"metric":{"instance":"a","pdtop_sig":"1"},"value":[1700000000,"NaN"]},` +
		`{"metric":{"instance":"b","pdtop_sig":"1"},"value":[1700000000,"+Inf"]},` +
		`{"metric":{"instance":"c","pdtop_sig":"1"},"value":[1700000000,"2"]}]}}`})
	c := testClient(t, srv.URL, 0)
	v, fail := c.instant(context.Background(), "row_gauges", "x", time.Now())
	if fail != nil {
		t.Fatal(fail.err)
	}
	w := c.takeWarnings()
	if len(w) != 1 || !strings.Contains(w[0], "partial response") || !strings.HasPrefix(w[0], "row_gauges: ") {
		t.Fatalf("warnings %q", w)
	}
	b := &Backend{plan: newPlan(nil, "instance", "engine_type")}
	d := &decoder{b: b, f: &frame{v: map[string]model.Vector{"row_gauges": v}}, secs: 60}
	got := d.bySig("row_gauges")
	if _, ok := got["a"]; ok {
		t.Errorf("NaN became a reading: %+v", got["a"])
	}
	if _, ok := got["b"]; ok {
		t.Errorf("+Inf became a reading: %+v", got["b"])
	}
	if r := got["c"][sources.SigRunning]; !r.Present || r.Value != 2 {
		t.Errorf("c: %+v", r)
	}
	if math.IsNaN(got["c"][sources.SigRunning].Value) {
		t.Error("NaN value")
	}
}
