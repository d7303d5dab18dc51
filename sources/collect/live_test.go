package collect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/store"
)

const okBody = "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 3\n"

// One target that hangs does not hold up the others: a round's jobs run
// independently (as the ui runs them, each in its own goroutine), the
// fast targets are ingested while the slow one is still blocked, and the
// next tick skips the slow target (marked slow) instead of queueing it.
func TestSlowTargetNeverDelaysOthers(t *testing.T) {
	release := make(chan struct{})
	var slowStarted sync.Once
	started := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowStarted.Do(func() { close(started) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Write([]byte(okBody))
	}))
	defer slow.Close()
	defer close(release)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(okBody)) }))
	defer fast.Close()

	st := store.New(store.Options{Interval: time.Second})
	targets := []sources.Target{{ID: "slow", URL: slow.URL + "/metrics", Name: "slow", Role: sources.RoleDecode}}
	for _, n := range []string{"f1", "f2", "f3", "f4", "f5"} {
		targets = append(targets, sources.Target{ID: n, URL: fast.URL + "/metrics?" + n, Name: n, Role: sources.RoleDecode})
	}
	st.SetTargets(t0, targets)
	live := &Live{Store: st, Scraper: newScraper(t, func() time.Time { return t0 }), Spread: 50 * time.Millisecond}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := map[string]chan struct{}{}
	for _, j := range live.Round() {
		ch := make(chan struct{})
		done[j.Key] = ch
		go func(j sources.Job) { j.Run(ctx); close(ch) }(j)
	}
	<-started
	for _, n := range []string{"f1", "f2", "f3", "f4", "f5"} {
		select {
		case <-done[n]:
		case <-ctx.Done():
			t.Fatalf("fast target %s waited for the slow one", n)
		}
	}
	select {
	case <-done["slow"]:
		t.Fatal("the slow target finished before it was released")
	default:
	}
	// The next tick finds "slow" still running: the ui skips it and tells
	// the backend, which marks it slow.
	live.Busy("slow")
	snap := st.Snapshot(t0, time.Minute)
	for _, ts := range snap.Targets {
		switch {
		case ts.ID == "slow" && (!ts.Slow || ts.Health != sources.Pending):
			t.Errorf("slow target: %+v", ts)
		case ts.ID != "slow" && ts.Health != sources.Up:
			t.Errorf("%s: %v %v", ts.ID, ts.Health, ts.LastError)
		}
	}
}

// The scraper never has more than Concurrency requests in flight, and a
// scrape waiting for a slot gives up at its deadline with a clear error.
func TestConcurrencyIsBounded(t *testing.T) {
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		w.Write([]byte(okBody))
	}))
	defer srv.Close()
	c := newScraper(t, nil)
	c.sem = make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Scrape(context.Background(), sources.Target{ID: "t", URL: srv.URL + "/metrics"})
		}()
	}
	for inFlight.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	res := c.Scrape(ctx, sources.Target{ID: "late", URL: srv.URL + "/metrics"})
	cancel()
	if res.Err == nil || res.Err.Class != sources.ErrTimeout {
		t.Fatalf("waiting for a slot: %+v", res.Err)
	}
	close(release)
	wg.Wait()
	if peak.Load() != 3 {
		t.Fatalf("peak in flight %d, want 3", peak.Load())
	}
}

// Offsets are stable per target and spread over [0, spread).
func TestOffsetIsStableAndSpread(t *testing.T) {
	spread := 200 * time.Millisecond
	seen := map[time.Duration]bool{}
	for i := 0; i < 100; i++ {
		id := "http://10.0.0." + string(rune('0'+i%10)) + string(rune('a'+i/10)) + ":30001/metrics"
		o := Offset(id, spread)
		if o < 0 || o >= spread || o != Offset(id, spread) {
			t.Fatalf("Offset(%q) = %v", id, o)
		}
		seen[o/(20*time.Millisecond)] = true
	}
	if len(seen) < 8 {
		t.Fatalf("100 targets fall in only %d of 10 slices of the spread", len(seen))
	}
	if Offset("x", 0) != 0 {
		t.Fatal("no spread, no offset")
	}
}
