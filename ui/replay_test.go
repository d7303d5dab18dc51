package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/record"
	"github.com/pdtop/pdtop/sources/replay"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
)

// recordedRun is a demo fleet scraped with a simulated clock (as fleetRun)
// while every raw body is recorded.
type recordedRun struct {
	*fleetRun
	w    *record.Writer
	path string
}

func newRecordedRun(t *testing.T, cfg sim.Config) *recordedRun {
	t.Helper()
	r := newFleetRun(t, cfg)
	path := filepath.Join(t.TempDir(), "run.pdrec")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	w, err := record.NewWriter(f, record.Options{Interval: time.Second, Created: r.now, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r.scraper.KeepBodies(true)
	w.Targets(r.now, r.store.Targets())
	return &recordedRun{fleetRun: r, w: w, path: path}
}

// advance is fleetRun.advance, recording every result as it is ingested.
func (r *recordedRun) advance(seconds int) {
	for i := 0; i < seconds; i++ {
		r.fleet.Step(time.Second)
		r.now = r.now.Add(time.Second)
		for _, t := range r.store.Targets() {
			res := r.scraper.Scrape(context.Background(), t)
			r.store.Ingest(res)
			r.w.Result(t, res)
		}
	}
}

// view renders snap on a fresh dashboard model of the given size.
func view(r *fleetRun, snap *sources.Snapshot, w, h int) string {
	m := newModel(r, w, h)
	m.lastTick = r.now
	m.Update(snapMsg{snap: snap})
	return m.View()
}

// TestReplayMatchesLive records a 5-minute demo run (prefill-restart:
// restart events, retries, a cache-gap verdict) and replays the file
// through the Player: at each checkpoint the replayed snapshot draws the
// very same dashboard as the live one did, at two sizes, and carries the
// same diagnoses.
func TestReplayMatchesLive(t *testing.T) {
	r := newRecordedRun(t, sim.Config{Seed: 5, Prefill: 2, Decode: 2, Replicas: 2, Scenario: sim.ScenarioPrefillRestart})
	checkpoints := []int{60, 150, 300}
	type want struct {
		at    time.Time
		views []string
		diag  string
	}
	var wants []want
	done := 0
	for _, cp := range checkpoints {
		r.advance(cp - done)
		done = cp
		s := r.snapshot()
		wants = append(wants, want{at: r.now, views: []string{view(r.fleetRun, s, 200, 60), view(r.fleetRun, s, 120, 40)},
			diag: diagText(s)})
	}
	if err := r.w.Close(); err != nil {
		t.Fatal(err)
	}
	wall := start
	p, err := replay.Open(r.path, replay.Options{Store: store.Options{Interval: time.Second}, Clock: func() time.Time { return wall }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if d := p.Damage(); d != "" {
		t.Fatalf("damage in a whole file: %s", d)
	}
	for i, w := range wants {
		// Speed 1 from the first record: the wall clock is the position.
		wall = start.Add(w.at.Sub(p.Progress().Start))
		p.Advance(context.Background())
		if got := p.Now(); !got.Equal(w.at) {
			t.Fatalf("checkpoint %d: replay at %v, want %v", i, got, w.at)
		}
		s := p.Snapshot(time.Minute)
		if got := diagText(s); got != w.diag {
			t.Errorf("checkpoint %d: diagnoses differ:\nlive:   %s\nreplay: %s", i, w.diag, got)
		}
		for j, size := range [][2]int{{200, 60}, {120, 40}} {
			got := view(r.fleetRun, s, size[0], size[1])
			if i == 0 && !strings.Contains(got, "no restarts seen since the recording started") {
				t.Errorf("a replay before any restart says since when it looked:\n%s", got)
			}
			// The one sentence that differs on purpose.
			rec, live := "since the recording started", "since pdtop started"
			got = strings.ReplaceAll(got, rec, live+strings.Repeat(" ", len(rec)-len(live)))
			if got != w.views[j] {
				t.Errorf("checkpoint %d (%v): %dx%d view differs\nlive:\n%s\nreplay:\n%s", i, w.at.Sub(start), size[0], size[1], w.views[j], got)
			}
		}
	}
	if v := wants[1].views[0]; !strings.Contains(v, "prefill-0") || strings.Contains(v, "waiting for first scrape") {
		t.Fatalf("the live view compared is not a dashboard with data:\n%s", v)
	}
	if !strings.Contains(wants[1].diag, "prefill-0") {
		t.Errorf("the restart's verdict should be in the diagnoses at 2:30: %s", wants[1].diag)
	}
}

// diagText is the diagnoses in words, for comparison.
func diagText(s *sources.Snapshot) string {
	var b strings.Builder
	for _, v := range s.Diagnosis.Hits {
		fmt.Fprintf(&b, "%s: %s | ", v.Name, v.Verdict)
	}
	for _, f := range s.Diagnosis.Findings {
		fmt.Fprintf(&b, "%s | ", f.Text)
	}
	c := s.Diagnosis.Capacity
	fmt.Fprintf(&b, "prefill %.6g/%.6g decode %.6g/%.6g goodput %+v", c.Prefill.Offered.Value, c.Prefill.Capacity.Value,
		c.Decode.Offered.Value, c.Decode.Capacity.Value, s.Diagnosis.Admission.Goodput.Share)
	return b.String()
}

// TestReplayKeys drives a replay through the dashboard: the progress line,
// pause, speed, seeking back (history rebuilt) and forward.
func TestReplayKeys(t *testing.T) {
	r := newRecordedRun(t, sim.Config{Seed: 2, Prefill: 1, Decode: 1, Replicas: 1, Scenario: sim.ScenarioSteady})
	r.advance(150)
	r.w.Close()
	wall := start
	p, err := replay.Open(r.path, replay.Options{Speed: 10, Clock: func() time.Time { return wall }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	m := New(Config{Backend: p, Interval: time.Second, Window: time.Minute, Styles: themes.NewStyles(themes.Mono())})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	step := func() {
		p.Advance(context.Background())
		m.Update(snapMsg{snap: p.Snapshot(time.Minute)})
	}
	wall = wall.Add(6 * time.Second) // 60 s of recording at 10x
	step()
	v := m.View()
	for _, want := range []string{"run.pdrec", "1:00 / 2:30", "10x", "replay 10x", "←/→ seek"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	key := func(s string) {
		var msg tea.KeyMsg
		switch s {
		case "left":
			msg = tea.KeyMsg{Type: tea.KeyLeft}
		case "right":
			msg = tea.KeyMsg{Type: tea.KeyRight}
		case "home":
			msg = tea.KeyMsg{Type: tea.KeyHome}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
		}
		m.Update(msg)
	}
	key("p")
	wall = wall.Add(10 * time.Second)
	step()
	if pr := p.Progress(); !pr.Paused || pr.Pos.Sub(pr.Start) != time.Minute {
		t.Fatalf("paused playback moved: %+v", pr)
	}
	if v := m.View(); !strings.Contains(v, "replay paused") || !strings.Contains(v, "❚❚") {
		t.Errorf("pause not shown:\n%s", v)
	}
	focus := m.focus
	key("left")
	key("left")
	step()
	if pr := p.Progress(); pr.Pos.Sub(pr.Start) != 40*time.Second {
		t.Fatalf("two seeks back from 1:00 should be at 0:40: %v", pr.Pos.Sub(pr.Start))
	}
	if m.focus != focus {
		t.Errorf("← moved the panel focus while replaying")
	}
	if s := m.shown; s == nil || s.Fleet.TargetsUp != 3 || !s.Fleet.InputRate.Present {
		t.Errorf("history not rebuilt after seeking back: %+v", s.Fleet)
	}
	// A seek back whose rebuild takes several rounds (a 1 ms deadline
	// each) still lands where it was asked, paused or not.
	key("left")
	for i := 0; i < 10000 && p.Progress().Seeking; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		p.Advance(ctx)
		cancel()
	}
	if pr := p.Progress(); pr.Seeking || pr.Pos.Sub(pr.Start) != 30*time.Second {
		t.Fatalf("slow rebuild: %+v at %v", pr, pr.Pos.Sub(pr.Start))
	}
	key("right")
	step()
	key(">")
	step()
	if pr := p.Progress(); pr.Pos.Sub(pr.Start) != 100*time.Second {
		t.Fatalf("⇧→ from 0:40: %v", pr.Pos.Sub(pr.Start))
	}
	key("+")
	key("p")
	wall = wall.Add(10 * time.Second) // 200 s at 20x: clamps at the end
	step()
	pr := p.Progress()
	if pr.Speed != 20 || !pr.Ended || !pr.Pos.Equal(pr.End) {
		t.Fatalf("end: %+v", pr)
	}
	if v := m.View(); !strings.Contains(v, "end of recording") {
		t.Errorf("end not shown:\n%s", v)
	}
	key("home") // the panels' first row, not the recording's start
	step()
	if pr := p.Progress(); pr.Pos.Equal(pr.Start) {
		t.Errorf("home went back to the start of the recording")
	}
	key("0")
	step()
	if pr := p.Progress(); !pr.Pos.Equal(pr.Start) {
		t.Errorf("0: %v", pr.Pos.Sub(pr.Start))
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	if v := m.View(); !strings.Contains(v, "back 1m") || !strings.Contains(v, "faster") || !strings.Contains(v, "pause playback") {
		t.Errorf("help lacks the playback keys:\n%s", v)
	}
}

// TestReplayDamagedFile cuts a recording short: it replays up to the cut
// and says where it stopped.
func TestReplayDamagedFile(t *testing.T) {
	r := newRecordedRun(t, sim.Config{Seed: 2, Prefill: 1, Decode: 1, Replicas: 1, Scenario: sim.ScenarioSteady})
	for i := 0; i < 60; i++ {
		r.advance(1)
		r.w.Flush()
	}
	r.w.Close()
	data, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.pdrec")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	wall := start
	p, err := replay.Open(cut, replay.Options{Speed: 100, Clock: func() time.Time { return wall }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.Contains(p.Damage(), "truncated") {
		t.Errorf("damage %q", p.Damage())
	}
	wall = wall.Add(time.Minute)
	p.Advance(context.Background())
	pr := p.Progress()
	if !pr.Ended || pr.End.Sub(pr.Start) < 30*time.Second || pr.End.Sub(pr.Start) > 45*time.Second {
		t.Errorf("progress %+v (%v)", pr, pr.End.Sub(pr.Start))
	}
	m := New(Config{Backend: p, Interval: time.Second, Window: time.Minute, Styles: themes.NewStyles(themes.Mono())})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	m.Update(snapMsg{snap: p.Snapshot(time.Minute)})
	if v := m.View(); !strings.Contains(v, "file truncated at byte") || !strings.Contains(v, "stops here") {
		t.Errorf("damage not on screen:\n%s", v)
	}
	if _, err := replay.Open(filepath.Join(t.TempDir(), "missing.pdrec"), replay.Options{}); err == nil {
		t.Errorf("a missing file opened")
	}
}
