package panels

import (
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/diagnose"
)

// restartSnapshot is the sample fleet with prefill-0 stale behind an
// open breaker (as at 1:44 of the prefill-restart demo) and prefill-1
// just restarted, with too few tokens since to show a hit.
func restartSnapshot() *sources.Snapshot {
	s := sampleSnapshot()
	p0, p1 := &s.Workers[0], &s.Workers[1]
	p0.Health, p0.Age = sources.Stale, 15*time.Second
	p0.LastError = &sources.ScrapeError{Class: sources.ErrRefused, Message: "connection refused"}
	p0.Router[0].CB = sources.Reading{Present: true, Value: 1, Source: "smg_worker_cb_state"}
	p1.Hit = sources.HitRatio{Hit: 300, Total: 6000, Unit: "tokens", Since: p1.LastRestart,
		Source: "cached_tokens_total / prompt_tokens_total, since the restart"}
	for i := range s.Targets {
		if s.Targets[i].ID == p0.ID {
			s.Targets[i] = p0.TargetStatus
		}
	}
	diagnose.Run(s)
	return s
}

// TestStaleWorkerIsNotOK: a worker that does not answer shows "stale" as
// its verdict, never "ok" from its last figures, in the panel and in the
// printed snapshot.
func TestStaleWorkerIsNotOK(t *testing.T) {
	s := restartSnapshot()
	v := render(Cache, s, 120, 40)
	golden(t, "cache_stale_and_restarted_120x40", v)
	row := rowOf(v, "prefill-0")
	if !strings.Contains(row, "STALE") || !strings.Contains(row, "stale") || strings.Contains(row, " ok ") ||
		strings.Contains(row, "unexplained") {
		t.Errorf("stale worker's row: %q", row)
	}
	if hv := verdictFor(s, s.Workers[0].ID); hv == nil || !strings.HasPrefix(hv.Verdict, "stale: no answer for 15s") || hv.GapKnown {
		t.Errorf("stale worker's verdict: %+v", hv)
	}
}

// TestRestartedRowSaysNA: too few tokens since the restart reads n/a with
// its reason in the legend, in both panels that show the row hit.
func TestRestartedRowSaysNA(t *testing.T) {
	s := restartSnapshot()
	for _, id := range []ID{Cache, PrefillQueue} {
		v := render(id, s, 120, 40)
		if row := rowOf(v, "prefill-1"); !strings.Contains(row, markPending) || strings.Contains(row, "3.0%") {
			t.Errorf("%v: restarted row: %q", id, row)
		}
		if !strings.Contains(v, "too few tokens since the restart") {
			t.Errorf("%v: no legend for the n/a:\n%s", id, v)
		}
	}
}

// TestOneRestartOneAge: the Cache panel's verdict and Restarts & retries
// give the restart the same age.
func TestOneRestartOneAge(t *testing.T) {
	s := sampleSnapshot()
	s.Time = s.Workers[1].LastRestart.Add(43 * time.Second)
	diagnose.Run(s)
	cache, rs := render(Cache, s, 200, 60), render(RestartsRetries, s, 120, 40)
	if !strings.Contains(cache, "restarted 43s ago") || !strings.Contains(rs, "43s ago") || strings.Contains(rs, "40s ago") {
		t.Errorf("two ages for one restart:\n%s\n%s", cache, rs)
	}
}
