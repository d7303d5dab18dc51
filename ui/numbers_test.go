package ui

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/panels"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/snapjson"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
)

// Figures that one number feeds must read the same wherever they are
// shown: the summary line, every panel, the drill-down and the snapshot
// JSON. These run the demo fleet over the real scrape path.

// poolCell returns the last cell of the "pool" row of a printed panel
// table whose header names col as its last column.
func poolCell(t *testing.T, text, col string) string {
	t.Helper()
	header := false
	for _, l := range strings.Split(text, "\n") {
		l = strings.Trim(l, "│ ")
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if f[0] == "worker" && f[len(f)-1] == col {
			header = true
		}
		if header && f[0] == "pool" {
			return f[len(f)-1]
		}
	}
	t.Fatalf("no pool row under a %q column in\n%s", col, text)
	return ""
}

// TestOutputTokensAgreeEverywhere: "output tok/s" is one figure — per-batch
// decode tokens when the workers expose them — in the summary, the decode
// admission and token cadence pool rows, the capacity view and the JSON.
func TestOutputTokensAgreeEverywhere(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 3, Prefill: 2, Decode: 2, Replicas: 1, Scenario: sim.ScenarioDecodeSaturation})
	r.advance(100) // long generations: finished-request tokens lag the per-batch ones
	s := r.snapshot()
	st := themes.NewStyles(themes.Mono())
	sum := panels.Summary(s, st, 600, panels.SummaryState{Window: s.Window})
	m := regexp.MustCompile(`out (\S+) tok/s`).FindStringSubmatch(sum)
	if m == nil {
		t.Fatalf("no output in the summary: %q", sum)
	}
	out := m[1]
	for _, id := range []panels.ID{panels.DecodeAdmission, panels.TokenCadence} {
		if got := poolCell(t, panels.Print(id, s, st, 140), "output"); got != out {
			t.Errorf("%s pool row output %s tok/s, summary %s tok/s", id, got, out)
		}
	}
	if !strings.Contains(s.Fleet.OutputRate.Source, `realtime_tokens_total{mode="decode"}`) {
		t.Errorf("fleet output source %q: want the per-batch decode counter", s.Fleet.OutputRate.Source)
	}
	var doc struct {
		Fleet struct {
			Output float64 `json:"output_tokens_per_second"`
			Source string  `json:"output_tokens_source"`
		} `json:"fleet"`
		Pools struct {
			Decode struct {
				Output struct {
					Value  float64 `json:"value"`
					Source string  `json:"source"`
				} `json:"output_tokens_per_second"`
			} `json:"decode"`
		} `json:"pools"`
		Workers []struct {
			Role   string `json:"role"`
			Output *struct {
				Value float64 `json:"value"`
			} `json:"output_tokens_per_second"`
		} `json:"workers"`
		Diagnosis struct {
			Capacity struct {
				Decode struct {
					Served *float64 `json:"served_per_second"`
				} `json:"decode"`
			} `json:"capacity"`
		} `json:"diagnosis"`
	}
	b, err := snapjson.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Fleet.Output <= 0 || doc.Fleet.Output != doc.Pools.Decode.Output.Value {
		t.Errorf("JSON fleet output %v, decode pool output %v", doc.Fleet.Output, doc.Pools.Decode.Output.Value)
	}
	var sumW float64
	for _, w := range doc.Workers {
		if w.Role == "decode" && w.Output != nil {
			sumW += w.Output.Value
		}
	}
	if d := sumW - doc.Fleet.Output; d > 1e-6 || d < -1e-6 {
		t.Errorf("decode workers' output %v ≠ fleet %v", sumW, doc.Fleet.Output)
	}
	if c := doc.Diagnosis.Capacity.Decode.Served; c == nil || *c != doc.Fleet.Output {
		t.Errorf("capacity decode served %v, fleet output %v", c, doc.Fleet.Output)
	}
	// The drill-down says which counter the panels' figure comes from.
	d := panels.NewDetail(st)
	d.SetSize(160, 200)
	d.SetSnapshot(s)
	d.SetTarget(s.WorkersByRole(sources.RoleDecode)[0].ID)
	if v := d.View(); !strings.Contains(v, "output tok/s in the panels, the summary and the charts") ||
		!strings.Contains(v, `realtime_tokens_total{mode="decode"} (per batch)`) {
		t.Errorf("drill-down does not say where output tok/s come from:\n%s", v)
	}
}

// replicaCells returns the cells of the admission table row of a replica
// (by name) under the header that starts with "replica".
func replicaCells(t *testing.T, text, name string) (header, row []string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(strings.Trim(l, "│ "))
		if len(f) == 0 {
			continue
		}
		if f[0] == "replica" {
			header = f
		}
		if header != nil && f[0] == name {
			return header, f
		}
	}
	t.Fatalf("no admission row for %s in\n%s", name, text)
	return nil, nil
}

// TestRejectedShareIsOneFigure: with one replica the replica row, the
// summary, the JSON (fleet, gateway, diagnosis) all say the same rejected
// share: (429 + 408 + 5xx) ÷ all responses over the window.
func TestRejectedShareIsOneFigure(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 1, Scenario: sim.ScenarioDecodeSaturation})
	r.advance(128)
	s := r.snapshot()
	st := themes.NewStyles(themes.Mono())
	m := regexp.MustCompile(`rejected (\S+%)`).FindStringSubmatch(panels.Summary(s, st, 600, panels.SummaryState{Window: s.Window}))
	if m == nil {
		t.Fatal("no rejected share in the summary")
	}
	header, row := replicaCells(t, panels.Print(panels.DecodeAdmission, s, st, 140), "gateway-0")
	if header[len(header)-1] != "rejected" || strings.TrimSuffix(row[len(row)-1], "!") != m[1] {
		t.Errorf("replica row rejected %s, summary %s (%v / %v)", row[len(row)-1], m[1], header, row)
	}
	var doc struct {
		Fleet struct {
			Rejected float64 `json:"rejected_ratio"`
		} `json:"fleet"`
		Gateways []struct {
			Rejected float64 `json:"rejected_ratio"`
		} `json:"gateways"`
		Diagnosis struct {
			Admission struct {
				Rejected float64 `json:"rejected_ratio"`
			} `json:"admission"`
		} `json:"diagnosis"`
	}
	b, _ := snapjson.Marshal(s)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if f := doc.Fleet.Rejected; f <= 0 || doc.Gateways[0].Rejected != f || doc.Diagnosis.Admission.Rejected != f {
		t.Errorf("rejected: fleet %v, gateway %v, diagnosis %v", f, doc.Gateways[0].Rejected, doc.Diagnosis.Admission.Rejected)
	}
}

// TestUnansweredStatusClassIsZero: a replica that exposes its responses
// family shows 0 for a class it never answered (its series is created at
// the first such answer), never a blank next to another replica's 0.
func TestUnansweredStatusClassIsZero(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 2, Scenario: sim.ScenarioReplicaSkew})
	r.advance(90)
	s := r.snapshot()
	text := panels.Print(panels.DecodeAdmission, s, themes.NewStyles(themes.Mono()), 160)
	h0, row0 := replicaCells(t, text, "gateway-0")
	_, row1 := replicaCells(t, text, "gateway-1")
	if len(row0) != len(row1) || len(row0) != len(h0) {
		t.Errorf("replica rows have blank cells:\n%s", text)
	}
	for _, g := range s.Gateways {
		for _, k := range []string{"2xx", "429", "408", "4xx", "5xx"} {
			if rd, ok := g.Responses[k]; !ok || !rd.Present {
				t.Errorf("%s %s = %+v, want a reading (0 when never answered)", g.Name, k, rd)
			}
		}
	}
}

// TestKVLatencyAboveTheTopBucket: in congested-link, prefill-0's KV
// transfers take longer than the top finite bucket (5 s); the KV panel
// and the JSON say "above 5 s", not "5.00s".
func TestKVLatencyAboveTheTopBucket(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 1, Scenario: sim.ScenarioCongestedLink})
	r.advance(130)
	s := r.snapshot()
	var p0 *sources.WorkerView
	for i := range s.Workers {
		if s.Workers[i].Name == "prefill-0" {
			p0 = &s.Workers[i]
		}
	}
	q := p0.Dist(sources.SigKVXferLatency)
	if !q.P99Beyond {
		t.Fatalf("prefill-0 KV latency p99 %v%s: want beyond the top bucket (buckets %v)", q.P99, q.Unit, q.Buckets)
	}
	text := panels.Print(panels.KVTransfer, s, themes.NewStyles(themes.Mono()), 140)
	if !regexp.MustCompile(`prefill-0 .*/>5\.00s`).MatchString(text) || !strings.Contains(text, "> above the top bucket") {
		t.Errorf("KV panel does not show prefill-0's p99 as >5.00s with its legend:\n%s", text)
	}
	b, _ := snapjson.Marshal(s)
	var doc struct {
		Workers []struct {
			Name  string `json:"name"`
			Dists map[string]struct {
				P99    float64 `json:"p99"`
				Beyond *struct {
					P99 bool `json:"p99"`
				} `json:"beyond_top_bucket"`
			} `json:"distributions"`
		} `json:"workers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, w := range doc.Workers {
		if d := w.Dists["kv_xfer_latency"]; w.Name == "prefill-0" && (d.Beyond == nil || !d.Beyond.P99) {
			t.Errorf("JSON prefill-0 kv_xfer_latency = %+v: want beyond_top_bucket.p99", d)
		}
	}
}

// newDiscoveredRun is a fleetRun whose workers arrive as they do in
// 'pdtop demo': the gateways first (the flags), the workers a moment later
// (the first discovery pass), scraped before the fleet has served anything
// (so they look freshly started), then whatever joins later.
func newDiscoveredRun(t *testing.T, cfg sim.Config) *fleetRun {
	t.Helper()
	r := newFleetRun(t, cfg)
	var gws []sources.Target
	for _, tg := range r.store.Targets() {
		if tg.Role == sources.RoleGateway {
			gws = append(gws, tg)
		}
	}
	all := r.store.Targets()
	r.store = store.New(store.Options{Interval: time.Second}) // a store that starts with the gateways alone
	r.store.SetTargets(r.now, gws)
	r.now = r.now.Add(200 * time.Millisecond)
	r.store.SetTargets(r.now, all)
	for _, tg := range r.store.Targets() {
		r.store.Ingest(r.scraper.Scrape(context.Background(), tg))
	}
	return r
}

// TestInitialDiscoveryIsNoColdStart: workers found by pdtop's first
// discovery are not "joined" cold starts (scale-out: prefill-0/1 are not
// "cold: joined" four minutes on), the worker that really joins is while
// the window still holds part of its first minute, and no chart is marked
// at the moment pdtop started.
func TestInitialDiscoveryIsNoColdStart(t *testing.T) {
	r := newDiscoveredRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 2, Scenario: sim.ScenarioScaleOut})
	causes := func(s *sources.Snapshot, name string) string {
		for _, v := range s.Diagnosis.Hits {
			if v.Name == name {
				var out []string
				for _, c := range v.Causes {
					out = append(out, string(c.Kind)+": "+c.Evidence)
				}
				return strings.Join(out, "; ")
			}
		}
		return ""
	}
	r.advance(59)
	m := newModel(r, 200, 60)
	m.lastTick = r.now
	m.Update(snapMsg{snap: r.snapshot()})
	if v := m.View(); strings.Contains(v, "↻") {
		t.Errorf("a restart mark with no restart (initial discovery):\n%s", v)
	}
	for r.now.Sub(start) < 100*time.Second { // prefill-2 joins at 1:20
		r.advance(2)
		r.store.SetTargets(r.now, targetsOf(r.fleet.Endpoints()))
	}
	s := r.snapshot()
	if c := causes(s, "prefill-2"); !strings.Contains(c, "joined") {
		t.Errorf("prefill-2 joined 20s ago: causes %q", c)
	}
	for r.now.Sub(start) < 250*time.Second {
		r.advance(2)
		r.store.SetTargets(r.now, targetsOf(r.fleet.Endpoints()))
	}
	s = r.snapshot()
	for _, name := range []string{"prefill-0", "prefill-1", "prefill-2"} {
		if c := causes(s, name); strings.Contains(c, "joined") {
			t.Errorf("%s at 4:10: causes %q; want no join (initial discovery, or over a minute and the window ago)", name, c)
		}
	}
}

// TestEvictionPressureWithoutAPrediction: on smg (no predicted hit) in
// eviction-pressure, both prefill workers' hit falls from ~75% to ~40%
// while they evict most of what they cache from a full pool: each gets a
// KV-pressure verdict against its own earlier hit, a kv-pressure finding
// reaches the summary, and the prefill panel shows residency beside
// usage, never a bare "0%" next to the eviction.
func TestEvictionPressureWithoutAPrediction(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 1, Gateway: sim.GatewaySMG, Scenario: sim.ScenarioEvictionPressure})
	r.advance(180)
	s := r.snapshot()
	for _, name := range []string{"prefill-0", "prefill-1"} {
		var v *sources.HitVerdict
		for i := range s.Diagnosis.Hits {
			if s.Diagnosis.Hits[i].Name == name {
				v = &s.Diagnosis.Hits[i]
			}
		}
		if v == nil || !v.Large || len(v.Causes) == 0 || v.Causes[0].Kind != sources.CauseKVPressure ||
			!strings.Contains(v.Verdict, "earlier") || !strings.Contains(v.Verdict, "resident") {
			t.Errorf("%s verdict: %+v", name, v)
		}
	}
	found := false
	for _, f := range s.Diagnosis.Findings {
		found = found || f.Kind == "kv-pressure"
	}
	st := themes.NewStyles(themes.Mono())
	if sum := panels.Summary(s, st, 200, panels.SummaryState{Window: s.Window}); !found || !strings.Contains(sum, "KV pressure") {
		t.Errorf("no KV-pressure finding in the summary (%v): %s", found, sum)
	}
	text := panels.Print(panels.PrefillQueue, s, st, 120)
	if !regexp.MustCompile(`prefill-0 .* \d+(\.\d)?%/(9\d|100)% `).MatchString(text) {
		t.Errorf("prefill panel does not show KV usage/residency:\n%s", text)
	}
}

// TestDecodeSaturationPrefillGapIsTheRouting: in decode-saturation (smg,
// one replica) at 2:15, prefill-1's hit is 25 points under prefill-0's and
// read "! unexplained": both hold dozens of requests in their bootstrap
// queues (prefill waiting for decode), prefill-1 holds fewer, so
// cache-aware routing sends it every prompt no worker has cached. The
// verdict says so, and does not alarm.
func TestDecodeSaturationPrefillGapIsTheRouting(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 1, Scenario: sim.ScenarioDecodeSaturation})
	r.advance(135)
	s := r.snapshot()
	var v *sources.HitVerdict
	for i := range s.Diagnosis.Hits {
		if s.Diagnosis.Hits[i].Name == "prefill-1" {
			v = &s.Diagnosis.Hits[i]
		}
	}
	if v == nil || !v.Large || v.Causes[0].Kind != sources.CauseTakesMisses || !strings.Contains(v.Verdict, "prefill waiting for decode") {
		t.Fatalf("prefill-1: %+v", v)
	}
	for _, f := range s.Diagnosis.Findings {
		if f.Name == "prefill-1" && f.Severity != sources.SevInfo {
			t.Errorf("finding %+v: the routing's gap is no alarm", f)
		}
	}
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		m := newModel(r, size[0], size[1])
		m.lastTick = r.now
		m.Update(snapMsg{snap: s})
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
		if v := m.View(); strings.Contains(v, "unexplained") || !strings.Contains(v, "takes the misses") {
			t.Errorf("%dx%d:\n%s", size[0], size[1], v)
		}
	}
}

// TestVerdictCausesVisible: a verdict cell's "!" promises its cause below;
// at 120x40 and 80x24 every flagged worker has its line.
func TestVerdictCausesVisible(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 1, Scenario: sim.ScenarioEvictionPressure})
	r.advance(180)
	s := r.snapshot()
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		m := newModel(r, size[0], size[1])
		m.lastTick = r.now
		m.Update(snapMsg{snap: s})
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
		v := m.View()
		for _, name := range []string{"prefill-0", "prefill-1"} {
			if !regexp.MustCompile(name+` +\S+ +! KV pressure`).MatchString(v) || !strings.Contains(v, "! "+name+": hit") {
				t.Errorf("%dx%d: %s's flagged verdict without its cause line:\n%s", size[0], size[1], name, v)
			}
		}
	}
}

// TestRouterBlocksHaveAHeading: with the 2026 router the cache panel's
// per-replica cells carry the router's KV-tree blocks ("15k blk"); their
// column heading names them.
func TestRouterBlocksHaveAHeading(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 2, Gateway: sim.Gateway2026, Scenario: sim.ScenarioSteady})
	r.advance(60)
	text := panels.Print(panels.Cache, r.snapshot(), themes.NewStyles(themes.Mono()), 140)
	if !strings.Contains(text, " blk") || strings.Count(text, "pick/s in-fl tree") != 2 || !strings.Contains(text, "tree = the router's KV-tree blocks") {
		t.Errorf("KV-tree blocks under no heading:\n%s", text)
	}
}
