package collect

import (
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/expo"
	"github.com/pdtop/pdtop/sources/schema"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

// benchIngest runs body through Process and into a store, one scrape per
// iteration with the receive time advancing a second, as a live target
// does. It reports MB/s of body and the families the Keep filter skipped.
func benchIngest(b *testing.B, body []byte, role sources.Role, process func([]byte) (*sources.Observation, *sources.ScrapeError)) {
	st := store.New(store.Options{Interval: time.Second})
	tg := sources.Target{ID: "t", URL: "http://t/metrics", Name: "t", Role: role}
	st.SetTargets(t0, []sources.Target{tg})
	now := t0
	var skipped, series int
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		obs, err := process(body)
		if err != nil {
			b.Fatal(err)
		}
		now = now.Add(time.Second)
		st.Ingest(sources.ScrapeResult{TargetID: "t", Time: now, Obs: obs})
		skipped, series = obs.Stats.Skipped, obs.Stats.Series
	}
	b.ReportMetric(float64(skipped), "families-skipped")
	b.ReportMetric(float64(series), "series-kept")
}

// processKeepAll is Process without the Keep pre-filter: every family is
// parsed and handed to the schema, to show what the filter saves.
func processKeepAll(body []byte) (*sources.Observation, *sources.ScrapeError) {
	r := expo.Parse(body, expo.Options{})
	obs := schema.Map(r.Families, r.Declared)
	obs.Stats = r.Stats
	return obs, nil
}

func readBody(b *testing.B, path string) []byte {
	body, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkProcessIngestWorker is parse + map + ingest of a current SGLang
// worker body (the shared 142 KB fixture: 887 lines, PD and per-stage
// histograms). "keep-panels" is the live path (Process, with
// schema.Wanted as the pre-filter); "keep-all" parses every family.
func BenchmarkProcessIngestWorker(b *testing.B) {
	body := readBody(b, "../expo/testdata/sglang-worker-large.prom")
	b.Run("keep-panels", func(b *testing.B) { benchIngest(b, body, sources.RolePrefill, Process) })
	b.Run("keep-all", func(b *testing.B) { benchIngest(b, body, sources.RolePrefill, processKeepAll) })
}

// BenchmarkProcessIngestGateway is the same for gateway bodies: the smg
// and legacy reference fixtures, and a demo smg replica fronting 32
// workers (per-worker health, breaker, in-flight and outcome series).
func BenchmarkProcessIngestGateway(b *testing.B) {
	for _, f := range []string{"smg_full.prom", "g1_024_full.prom", "g3_2026.prom"} {
		body := readBody(b, "../schema/testdata/"+f)
		b.Run(f, func(b *testing.B) { benchIngest(b, body, sources.RoleGateway, Process) })
	}
	fl, err := sim.New(sim.Config{Seed: 1, Prefill: 16, Decode: 16, Replicas: 1, Scenario: "steady"})
	if err != nil {
		b.Fatal(err)
	}
	eps, err := fl.Serve("127.0.0.1")
	if err != nil {
		b.Fatal(err)
	}
	defer fl.Close()
	fl.Step(30 * time.Second)
	resp, err := http.Get(eps[0].MetricsURL)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.Run("demo-smg-32-workers", func(b *testing.B) { benchIngest(b, body, sources.RoleGateway, Process) })
}
