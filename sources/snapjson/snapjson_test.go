package snapjson

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"github.com/prometheus/common/config"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

const schemaPath = "../../docs/snapshot.schema.json"

// schema compiles docs/snapshot.schema.json with format assertions on.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("snapshot.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("snapshot.schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return sch
}

func validate(t *testing.T, sch *jsonschema.Schema, s *sources.Snapshot) map[string]any {
	t.Helper()
	out, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("output does not follow %s: %v\n%s", schemaPath, err, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// demoSnapshot scrapes the demo fleet through the real HTTP path for 20
// simulated seconds, with a worker killed at the end (stale) and a legacy
// gateway (predicted hits).
func demoSnapshot(t *testing.T) *sources.Snapshot {
	t.Helper()
	f, err := sim.New(sim.Config{Seed: 2, Prefill: 2, Decode: 2, Replicas: 2, Gateway: sim.GatewayLegacy, Scenario: "steady"})
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
		targets = append(targets, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL, Name: e.Name, Role: e.Role, Origin: sources.OriginDemo})
	}
	st.SetTargets(now, targets)
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sc := collect.New(client, collect.Options{Clock: func() time.Time { return now }})
	for i := 0; i < 20; i++ {
		if i == 17 {
			f.Kill("decode-1")
		}
		f.Step(time.Second)
		now = now.Add(time.Second)
		for _, tg := range st.Targets() {
			st.Ingest(sc.Scrape(context.Background(), tg))
		}
	}
	s := st.Snapshot(now, 10*time.Second)
	s.Thresholds = sources.Thresholds{QueueDepth: 1, KVUsage: 0.01}.WithDefaults() // make crossings appear
	return s
}

// TestDemoSnapshotFollowsTheSchema validates a real snapshot of the demo
// fleet against docs/snapshot.schema.json and spot-checks units and
// nulls.
func TestDemoSnapshotFollowsTheSchema(t *testing.T) {
	sch := schema(t)
	s := demoSnapshot(t)
	m := validate(t, sch, s)
	if len(m["crossings"].([]any)) == 0 {
		t.Error("no crossings with tiny thresholds")
	}
	w := m["workers"].([]any)[0].(map[string]any)
	r := w["readings"].(map[string]any)["prompt_tokens"].(map[string]any)
	if r["unit"] != "tokens/s" || r["kind"] != "counter" || r["source"] == "" || r["increase"] == nil {
		t.Errorf("prompt tokens reading: %v", r)
	}
	if _, ok := w["distributions"].(map[string]any)["queue_time"]; !ok {
		t.Errorf("prefill worker without queue_time: %v", w["distributions"])
	}
	var stale bool
	for _, x := range m["workers"].([]any) {
		if x.(map[string]any)["health"] == "stale" {
			stale = x.(map[string]any)["last_error"] != nil
		}
	}
	if !stale {
		t.Error("the killed worker should be stale with its last error")
	}
}

// TestOddSnapshotsFollowTheSchema: an empty snapshot and one full of NaN,
// ±Inf and missing maps still give a valid document (nulls, not NaN,
// which JSON cannot carry).
func TestOddSnapshotsFollowTheSchema(t *testing.T) {
	sch := schema(t)
	validate(t, sch, &sources.Snapshot{Time: time.Unix(0, 0), Window: time.Second})
	nan, inf := math.NaN(), math.Inf(1)
	s := &sources.Snapshot{
		Time: time.Unix(1, 0), Window: 10 * time.Second,
		Targets: []sources.TargetStatus{{ID: "x", Health: sources.Down, LastError: &sources.ScrapeError{Class: sources.ErrRefused, Message: "no"}}},
		Workers: []sources.WorkerView{{
			TargetStatus: sources.TargetStatus{ID: "w", Role: sources.RoleDecode, Health: sources.Up},
			Readings: sources.Readings{sources.SigKVUsage: {Present: true, Value: nan},
				sources.SigPromptTokens: {Present: true, Value: inf, Increase: nan}, sources.SigWaiting: {Source: "q"}},
			Dists: map[sources.Signal]sources.Quantiles{sources.SigITL: {Present: true, P50: nan, P99: inf, Mean: nan, Form: "summary", Unit: "s"}},
			Hit:   sources.HitRatio{Present: true, Ratio: nan, Hit: inf, Total: 0, Unit: "tokens"},
			Router: []sources.RouterView{{Replica: "g", CB: sources.Reading{Present: true, Value: 7},
				Health: sources.Reading{Present: true, Value: 0}}},
		}},
		Gateways: []sources.GatewayView{{TargetStatus: sources.TargetStatus{ID: "g", Role: sources.RoleGateway, Health: sources.Up},
			Responses: map[string]sources.Reading{"2xx": {Present: true, Value: nan}}}},
		Decode: sources.PoolView{Workers: 1},
	}
	validate(t, sch, s)
}

// TestKeysAreUniquePerKind: no two signals of one kind share a JSON key.
func TestKeysAreUniquePerKind(t *testing.T) {
	seen := map[string]sources.Signal{}
	for _, sig := range sources.AllSignals() {
		info := sig.Info()
		k := Key(sig) + "/" + map[bool]string{true: "dist", false: "scalar"}[info.Kind == sources.Histogram] +
			"/" + map[bool]string{true: "gw", false: "worker"}[info.Scope == sources.ScopeGateway]
		if prev, dup := seen[k]; dup {
			t.Errorf("%v and %v both map to %s", prev, sig, k)
		}
		seen[k] = sig
	}
}

// TestSchemaRejectsWhatItShould: the schema is strict enough to catch a
// misspelt field, a NaN smuggled in as a string and a wrong kind.
func TestSchemaRejectsWhatItShould(t *testing.T) {
	sch := schema(t)
	good, err := Marshal(&sources.Snapshot{Time: time.Unix(0, 0), Window: time.Second,
		Workers: []sources.WorkerView{{TargetStatus: sources.TargetStatus{ID: "w", Health: sources.Up},
			Readings: sources.Readings{sources.SigWaiting: {Present: true, Value: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	waiting := func(m map[string]any) map[string]any {
		return m["workers"].([]any)[0].(map[string]any)["readings"].(map[string]any)["waiting"].(map[string]any)
	}
	for name, mutate := range map[string]func(map[string]any){
		"unchanged":       func(map[string]any) {},
		"extra field":     func(m map[string]any) { m["window_secs"] = 1 },
		"NaN as a string": func(m map[string]any) { waiting(m)["value"] = "NaN" },
		"kind histogram":  func(m map[string]any) { waiting(m)["kind"] = "histogram" },
	} {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		mutate(m)
		b, _ := json.Marshal(m)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		err = sch.Validate(inst)
		if (err == nil) != (name == "unchanged") {
			t.Errorf("%s: validation error %v", name, err)
		}
	}
}
