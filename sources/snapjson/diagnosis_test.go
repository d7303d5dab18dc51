package snapjson

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

// TestDiagnosisInTheDocument: the demo fleet's decode-saturation scenario
// (decode over capacity, 429s, goodput below 100 %) gives a document that
// follows the schema and carries the diagnoses with their units.
func TestDiagnosisInTheDocument(t *testing.T) {
	f, err := sim.New(sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 2, Scenario: sim.ScenarioDecodeSaturation})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := f.Serve("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	st := store.New(store.Options{Interval: time.Second})
	var targets []sources.Target
	for _, e := range eps {
		targets = append(targets, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL, Name: e.Name, Role: e.Role})
	}
	st.SetTargets(now, targets)
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sc := collect.New(client, collect.Options{Clock: func() time.Time { return now }})
	for i := 0; i < 200; i++ {
		f.Step(time.Second)
		now = now.Add(time.Second)
		for _, tg := range st.Targets() {
			st.Ingest(sc.Scrape(context.Background(), tg))
		}
	}
	m := validate(t, schema(t), st.Snapshot(now, time.Minute))
	d := m["diagnosis"].(map[string]any)
	dec := d["capacity"].(map[string]any)["decode"].(map[string]any)
	if u, _ := dec["utilisation_ratio"].(float64); u <= 1 || dec["unit"] != "output tok/s" || dec["workers_needed"] == nil {
		t.Errorf("decode load: %v", dec)
	}
	adm := d["admission"].(map[string]any)
	g := adm["goodput"].(map[string]any)
	if hi := g["share"].(map[string]any)["hi"].(float64); hi >= 0.99 || g["slo_ttft_seconds"].(float64) != 2 {
		t.Errorf("goodput %v", g)
	}
	if b, ok := g["itl_bucket_seconds"].(map[string]any); !ok || !(b["lo"].(float64) <= 0.05) {
		t.Errorf("goodput ITL bucket %v", g["itl_bucket_seconds"])
	}
	if r := adm["rejected_per_second"].(map[string]any)["429"]; r == nil {
		t.Errorf("no 429s: %v", adm)
	}
	if len(d["hit_verdicts"].([]any)) != 4 || len(d["findings"].([]any)) == 0 {
		t.Errorf("verdicts %v findings %v", d["hit_verdicts"], d["findings"])
	}
}

// TestDiagnosisOddValues: stalls, non-finite figures and empty ranges
// still give a valid document.
func TestDiagnosisOddValues(t *testing.T) {
	nan := math.NaN()
	s := &sources.Snapshot{Time: time.Unix(10, 0), Window: time.Minute}
	s.Diagnosis = sources.Diagnosis{
		Hits: []sources.HitVerdict{{Scope: "worker", ID: "w", Name: "w", Role: sources.RolePrefill, GapKnown: true, Gap: nan,
			Causes: []sources.Cause{{Kind: sources.CauseUnexplained, Evidence: "x"}}}},
		Capacity: sources.Capacity{TargetUtil: 0.8,
			Prefill: sources.PoolLoad{Present: true, Role: sources.RolePrefill, Unit: "uncached tok/s", Utilisation: sources.Reading{Present: true, Value: nan}},
			Transfer: sources.TransferLoad{Present: true, Links: []sources.LinkLoad{{Name: "p", Busy: sources.Reading{Present: true, Value: math.Inf(1)}},
				{Name: "q", Busy: sources.Reading{Present: true, Value: 1}, InFlight: sources.Reading{Present: true, Value: 3.3},
					Queued: true, Headroom: sources.Reading{Present: true}}}},
			ColdStarts: []sources.ColdStart{{Kind: "burst", Name: "fleet", At: time.Unix(5, 0), First: nan, Steady: 1}}},
		Admission: sources.Admission{Goodput: sources.Goodput{Present: true, Share: sources.Range{Present: true, Lo: nan, Est: 0.5, Hi: 1},
			ITLBucket: sources.SLOBucket{Present: true, Lo: 5, Hi: math.Inf(1)}}},
		Stalls:   []sources.Stall{{Kind: "transfer stall", ID: "d", Name: "d", Role: sources.RoleDecode, Since: time.Unix(1, 0), For: 9 * time.Second, Queued: 3}},
		Findings: []sources.Finding{{Severity: sources.SevCrit, Kind: "transfer-stall", Name: "d", Text: "d: transfer stall"}},
	}
	m := validate(t, schema(t), s)
	st := m["diagnosis"].(map[string]any)["stalls"].([]any)[0].(map[string]any)
	if st["seconds"].(float64) != 9 || st["kind"] != "transfer stall" {
		t.Errorf("stall %v", st)
	}
	if b := m["diagnosis"].(map[string]any)["admission"].(map[string]any)["goodput"].(map[string]any)["itl_bucket_seconds"].(map[string]any); b["lo"] != 5.0 || b["hi"] != nil {
		t.Errorf("ITL bucket beyond the top bound: %v", b)
	}
	q := m["diagnosis"].(map[string]any)["capacity"].(map[string]any)["transfer"].(map[string]any)["links"].([]any)[1].(map[string]any)
	if q["busy_ratio"] != 1.0 || q["in_flight_mean"] != 3.3 || q["queued"] != true || q["headroom_bytes_per_second"] != 0.0 {
		t.Errorf("queued link %v", q)
	}
}
