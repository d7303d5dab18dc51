package ui

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
)

// update is the -update flag (registered by x/exp/golden, which teatest
// imports): rewrite golden files.
func update() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

var start = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

// fleetRun is a demo fleet scraped through the real HTTP path with a
// simulated clock: Step(1s) then one scrape round, so runs are
// deterministic for a seed.
type fleetRun struct {
	t       testing.TB
	fleet   *sim.Fleet
	store   *store.Store
	scraper *collect.Scraper
	now     time.Time
}

func newFleetRun(t testing.TB, cfg sim.Config) *fleetRun {
	t.Helper()
	f, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := f.Serve("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r := &fleetRun{t: t, fleet: f, now: start, store: store.New(store.Options{Interval: time.Second})}
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.scraper = collect.New(client, collect.Options{Clock: func() time.Time { return r.now }})
	r.store.SetTargets(r.now, targetsOf(eps))
	return r
}

func targetsOf(eps []sim.Endpoint) []sources.Target {
	var out []sources.Target
	for _, e := range eps {
		out = append(out, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL,
			Name: e.Name, Role: e.Role, Origin: sources.OriginDemo})
	}
	return out
}

// advance steps the fleet and scrapes every target once per second.
func (r *fleetRun) advance(seconds int) {
	for i := 0; i < seconds; i++ {
		r.fleet.Step(time.Second)
		r.now = r.now.Add(time.Second)
		for _, t := range r.store.Targets() {
			r.store.Ingest(r.scraper.Scrape(context.Background(), t))
		}
	}
}

func (r *fleetRun) snapshot() *sources.Snapshot { return r.store.Snapshot(r.now, time.Minute) }

// TestDemoFleetEndToEnd runs the demo fleet and the real scrape path and
// checks that every panel's signals arrive, then kills a worker and checks
// it goes stale with a reason while the rest keep updating.
func TestDemoFleetEndToEnd(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 7, Prefill: 2, Decode: 2, Replicas: 1, Scenario: "steady"})
	r.advance(45)
	s := r.snapshot()
	if s.Fleet.TargetsUp != 5 || s.Fleet.Targets != 5 {
		t.Fatalf("targets up %d/%d: %+v", s.Fleet.TargetsUp, s.Fleet.Targets, s.Targets)
	}
	need := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("missing: %s", what)
		}
	}
	for _, w := range s.WorkersByRole(sources.RolePrefill) {
		for _, sig := range []sources.Signal{sources.SigWaiting, sources.SigBootstrapQueue, sources.SigInflightQueue, sources.SigPromptTokens} {
			need(w.Name+" "+sig.String(), w.Readings.Get(sig).Present)
		}
		need(w.Name+" queue time", w.Dist(sources.SigQueueTime).Present)
		need(w.Name+" KV transfer latency", w.Dist(sources.SigKVXferLatency).Present)
		need(w.Name+" actual hit", w.Hit.Present && w.Hit.Total > 0)
		need(w.Name+" router view", len(w.Router) == 1 && w.Router[0].InFlight.Present)
	}
	for _, w := range s.WorkersByRole(sources.RoleDecode) {
		for _, sig := range []sources.Signal{sources.SigRunning, sources.SigPreallocQueue, sources.SigTransferQueue, sources.SigKVUsage} {
			need(w.Name+" "+sig.String(), w.Readings.Get(sig).Present)
		}
		need(w.Name+" ITL", w.Dist(sources.SigITL).Present)
	}
	g := s.Gateways[0]
	need("gateway offered", g.Readings.Get(sources.SigGWOffered).Present)
	need("gateway 2xx", g.Responses["2xx"].Present)
	need("gateway retries", g.Readings.Get(sources.SigGWRetries).Present)
	need("fleet input rate", s.Fleet.InputRate.Present && s.Fleet.InputRate.Value > 0)
	need("fleet output rate", s.Fleet.OutputRate.Present && s.Fleet.OutputRate.Value > 0)
	need("fleet hit", s.Fleet.Hit.Present)
	for _, name := range []string{"ttft_p50", "ttft_p99", "itl_p50", "itl_p99", "output_tps", "input_tps", "hit_actual"} {
		need("chart "+name, finitePoints(s.Charts[name].Points) > 5)
	}

	// Kill a decode worker: it goes stale with a reason, keeps its last
	// values, and the others keep updating.
	before := s.WorkersByRole(sources.RoleDecode)[1]
	r.fleet.Kill(before.Name)
	r.advance(3)
	s = r.snapshot()
	after := s.WorkersByRole(sources.RoleDecode)[1]
	if after.Health != sources.Stale || after.LastError == nil || after.LastError.Class != sources.ErrRefused {
		t.Fatalf("killed worker: health %v err %+v", after.Health, after.LastError)
	}
	if after.Age != 3*time.Second || !after.Readings.Get(sources.SigRunning).Present {
		t.Fatalf("killed worker lost its last values or age: age %v", after.Age)
	}
	if s.Fleet.TargetsUp != 4 {
		t.Fatalf("others should stay up: %d up", s.Fleet.TargetsUp)
	}
	m := newModel(r, 120, 40)
	m.Update(snapMsg{snap: s})
	v := m.View()
	if !strings.Contains(v, "STALE") {
		t.Errorf("stale worker not marked on screen:\n%s", v)
	}
}

func finitePoints(p []float64) int {
	n := 0
	for _, v := range p {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

func newModel(r *fleetRun, w, h int) *Model {
	m := New(Config{Backend: &collect.Live{Store: r.store, Clock: func() time.Time { return r.now }},
		Interval: time.Second, Window: time.Minute, Styles: themes.NewStyles(themes.Mono())})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// TestGoldenViews draws the whole dashboard from a deterministic demo run
// at the three reference sizes, colour off.
func TestGoldenViews(t *testing.T) {
	r := newFleetRun(t, sim.Config{Seed: 3, Prefill: 2, Decode: 2, Replicas: 2, Gateway: sim.GatewayLegacy, Scenario: "steady"})
	r.advance(40)
	snap := r.snapshot()
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}} {
		m := newModel(r, size[0], size[1])
		m.lastTick = r.now
		m.Update(snapMsg{snap: snap})
		got := m.View()
		checkSize(t, got, size[0], size[1])
		golden(t, filepath.Join("testdata", fmt.Sprintf("dashboard_%dx%d.golden", size[0], size[1])), got)
	}
}

func checkSize(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Fatalf("%dx%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw != w {
			t.Fatalf("%dx%d: line %d is %d cells: %q", w, h, i, lw, l)
		}
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ui -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./ui -update, then review the diff):\n%s", path, got)
	}
}

// TestMonoDashboardHasAttributesButNoColour draws the whole dashboard, the
// help and a drill-down with the mono theme under a 256-colour profile
// (what NO_COLOR gives on a capable terminal): no colour codes at all, but
// bold and reverse video where they carry meaning (headers, focus, the
// selected row, critical values).
func TestMonoDashboardHasAttributesButNoColour(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	r := newFleetRun(t, sim.Config{Seed: 3, Prefill: 2, Decode: 2, Replicas: 1, Scenario: "steady"})
	r.advance(20)
	m := newModel(r, 160, 48)
	m.Update(snapMsg{snap: r.snapshot()})
	views := []string{m.View()}
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	views = append(views, m.View())
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	views = append(views, m.View())
	sgr := regexp.MustCompile(`\x1b\[([0-9;]*)m`)
	seen := map[string]bool{}
	for _, v := range views {
		for _, mm := range sgr.FindAllStringSubmatch(v, -1) {
			for _, code := range strings.Split(mm[1], ";") {
				switch code {
				case "", "0", "1", "2", "4", "7", "22", "24", "27":
					seen[code] = true
				default:
					t.Fatalf("colour code %q in mono output", mm[0])
				}
			}
		}
	}
	if !seen["1"] || !seen["7"] {
		t.Fatalf("mono should still use bold and reverse; saw %v", seen)
	}
}
