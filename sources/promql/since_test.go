package promql

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
)

// Rows restarted inside the window get one since-restart hit query per
// restart time, with ranges from that time; the row's Hit counts since the
// restart (n/a under MinTokensSinceRestart tokens, or with nothing
// counted), HitWindow keeps the window figure, and rows without a restart
// keep the window figure as Hit.
func TestSinceRestartHits(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	b := &Backend{plan: newPlan(nil, "instance", "engine_type"), opts: Options{ScrapeInterval: 15 * time.Second},
		restart: map[string][]time.Time{
			"a": {at.Add(-50 * time.Second), at.Add(-20 * time.Second)}, // the latest counts
			"b": {at.Add(-20 * time.Second)},
			"c": {at.Add(-90 * time.Second)}, // before the window
			"e": {at.Add(-10 * time.Second)},
		}}
	var rows []rowRef
	for _, inst := range []string{"a", "b", "c", "d", "e"} {
		rows = append(rows, rowRef{inst: inst, role: sources.RolePrefill})
	}
	qs, since := b.sinceQueries(at, time.Minute, rows)
	if len(qs) != 2 || len(since) != 3 || !since["a"].Equal(at.Add(-20*time.Second)) || !since["e"].Equal(at.Add(-10*time.Second)) {
		t.Fatalf("queries %d, since %v", len(qs), since)
	}
	// qs are sorted by name: the 20 s-old restart (a, b) first.
	for i, want := range [][]string{
		{`"a|b"`, "[20s]", "[30s]", "resets(", "[1m20s]"},
		{`"e"`, "[10s]", "[30s]", "[1m10s]"}, // an increase spans at least two scrapes
	} {
		for _, w := range want {
			if !strings.Contains(qs[i].q, w) {
				t.Errorf("query %s lacks %s:\n%s", qs[i].name, w, qs[i].q)
			}
		}
	}

	sample := func(inst, sig string, v float64) *model.Sample {
		return &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst), sigTag: model.LabelValue(sig), "pdtop_src": "3"},
			Value: model.SampleValue(v)}
	}
	f := &frame{at: at, window: time.Minute, rows: rows, since: since, carried: map[string]bool{}, v: map[string]model.Vector{
		"row_hit": {sample("a", cHit, 80), sample("a", cTotal, 100), sample("b", cHit, 50), sample("b", cTotal, 100),
			sample("d", cHit, 10), sample("d", cTotal, 100)},
		qs[0].name: {sample("a", cHit, 10000), sample("a", cTotal, 40000), sample("b", cHit, 100), sample("b", cTotal, 1000)},
	}}
	d := &decoder{b: b, f: f, now: at, secs: 60}
	got := map[string]sources.WorkerView{}
	for _, w := range d.workers(nil, time.Minute, nil) {
		got[w.Name] = w
	}
	a, bw, dw, e := got["a"], got["b"], got["d"], got["e"]
	if !a.Hit.Present || a.Hit.Ratio != 0.25 || a.Hit.Total != 40000 || !a.Hit.Since.Equal(since["a"]) ||
		a.Hit.Source != hitSources["3"]+", since the restart" || a.HitWindow.Ratio != 0.8 {
		t.Errorf("a: Hit %+v, HitWindow %+v", a.Hit, a.HitWindow)
	}
	if bw.Hit.Present || bw.Hit.Since.IsZero() || bw.Hit.Total != 1000 || !bw.HitWindow.Present {
		t.Errorf("b (under %d tokens since): Hit %+v, HitWindow %+v", sources.MinTokensSinceRestart, bw.Hit, bw.HitWindow)
	}
	if e.Hit.Present || !e.Hit.Since.Equal(since["e"]) || e.Hit.Total != 0 {
		t.Errorf("e (nothing counted since): Hit %+v", e.Hit)
	}
	if !dw.Hit.Since.IsZero() || dw.Hit.Ratio != 0.1 || dw.HitWindow != dw.Hit {
		t.Errorf("d (no restart): Hit %+v, HitWindow %+v", dw.Hit, dw.HitWindow)
	}
}
