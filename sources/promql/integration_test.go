package promql

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/internal/promrun"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/sanitize"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/sim"
	"github.com/pdtop/pdtop/sources/store"
)

// Tolerances of TestMatchesDirectScraping, and why the two paths differ
// by construction:
//   - rates: Prometheus' rate() extrapolates the first and last samples
//     towards the window's edges (up to half an interval each side), and
//     its samples are taken up to one scrape interval apart from pdtop's;
//     over a 40 s window that is a few percent of a bursty rate;
//   - hit ratios are ratios of increases over the same windows, so most of
//     that cancels;
//   - quantiles are interpolated inside the same buckets from bucket
//     counts over windows that differ at the edges by under a second;
//   - gauges and restarts are compared after the fleet is frozen, when
//     both scrapers read identical bodies: they must be equal.
//
// The scrapes of the two paths are not aligned (Prometheus spreads its
// targets by a hash of their labels), so a window's edge can hold one more
// sample in one path than in the other: one scrape interval of a bursty
// counter, which for a worker restarted inside the window was 40 % of its
// rate in a trial run. The test therefore pauses the fleet around the
// window's start and freezes it before its end, so both edges are flat
// and what remains is the difference by construction.
const (
	tolRate     = 0.10 // relative
	tolHit      = 0.03 // absolute (ratio 0–1)
	tolQuantile = 0.15 // relative
	tolGauge    = 0.0  // absolute: frozen fleet
	// The restarted worker: its old process dies between the two paths'
	// scrapes, so each took its last sample of it at a different moment
	// (up to one scrape interval of a bursty counter: +5.5 % in a trial
	// run), and rate() then extrapolates that series half an interval past
	// its last sample where pdtop knows the process restarted and counts
	// from zero (+6 %). Both scale as one interval ÷ the pre-restart part
	// of the window (≈ 16 s here). Counters that a cold cache does not
	// expose again (cache hits) are extrapolated while the others are not,
	// which biases the hit ratio by the same share.
	tolRestartedRate = 0.25 // relative
	tolRestartedHit  = 0.08 // absolute
	// The hit since the restart: both paths count the new process from
	// zero (through Prometheus a counter that went down is read as its
	// latest value: no extrapolation) up to the frozen bodies both read,
	// so its tokens and ratio are equal in practice (identical in a trial
	// run); the ordinary hit tolerance, and 2 % for the token count. The
	// restart's time differs by up to the restart scan's chart step
	// (events sit on the first step after the new process's first sample:
	// 5 s here) plus a scrape interval either way.
	tolSinceHit    = tolHit
	tolSinceTokens = 0.02 // relative
	tolSinceStart  = 7 * time.Second

	itWindow    = 40 * time.Second
	itPauseAt   = 6 * time.Second  // the fleet pauses for itPause …
	itPause     = 4 * time.Second  // … so the window's start edge is flat
	itRestartAt = 26 * time.Second // prefill-0 restarts inside the window
	itFreezeAt  = 44 * time.Second // the fleet freezes: the end edge is flat
)

// TestMatchesDirectScraping starts Debian's Prometheus on loopback scraping
// the demo fleet every second, restarts a prefill worker mid-run, then
// freezes the fleet and checks that the Prometheus backend's figures
// match pdtop's own direct-scrape figures for the same fleet and window.
func TestMatchesDirectScraping(t *testing.T) {
	if _, err := promrun.Binary(); err != nil {
		t.Skipf("skipping the real-Prometheus test: %v", err)
	}
	if testing.Short() {
		t.Skip("skipping the real-Prometheus test in -short mode (it runs for about a minute)")
	}
	cfg := sim.Config{Seed: 11, Prefill: 2, Decode: 2, Replicas: 1, Scenario: "steady"}
	cfg.Capacity = sim.DefaultCapacity()
	cfg.Capacity.Warmup = 2 * time.Second
	// The gateway's breaker on the restarted worker (opened by the
	// refused connections of its warm-up) half-opens after 3 s instead of
	// 30 s, so the new process serves for most of the rest of the run and
	// its hit since the restart has tokens to count.
	cfg.Router = sim.DefaultRouter()
	cfg.Router.CBTimeout = 3 * time.Second
	f, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := f.Serve("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	// decode-1's instance label is hostile: it must reach PromQL only
	// inside escaped literals and the screen only sanitised.
	const hostile = "decode-1\"} or vector(1) or up{x=\"\\ \x1b]0;pwned\x07\r\u202e"
	var hostports []string
	byName := map[string]string{}
	labels := map[string]map[string]string{}
	for _, e := range eps {
		hp := strings.TrimPrefix(e.BaseURL, "http://")
		hostports = append(hostports, hp)
		byName[e.Name] = hp
		if e.Name == "decode-1" {
			labels[hp] = map[string]string{"instance": hostile}
			byName[e.Name] = sanitize.Text(hostile)
		}
	}
	rules, err := Rules(RulesOptions{Window: itWindow})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := promrun.Start(ctx, promrun.Config{Dir: t.TempDir(), Jobs: map[string][]string{"pdtop-sim": hostports},
		Labels: labels, RuleFiles: [][]byte{rules}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)

	// Direct scraping, every second, as the dashboard does.
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: 900 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(store.Options{Interval: time.Second})
	var targets []sources.Target
	for _, e := range eps {
		targets = append(targets, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL,
			Name: e.Name, Role: e.Role, Origin: sources.OriginDemo})
	}
	st.SetTargets(time.Now(), targets)
	live := &collect.Live{Store: st, Scraper: collect.New(client, collect.Options{Timeout: 900 * time.Millisecond})}
	var simMu sync.Mutex
	var stopSim context.CancelFunc
	resume := func() {
		simMu.Lock()
		defer simMu.Unlock()
		var simCtx context.Context
		simCtx, stopSim = context.WithCancel(ctx)
		go f.Run(simCtx, 1)
	}
	pause := func() {
		simMu.Lock()
		defer simMu.Unlock()
		stopSim()
	}
	resume()
	defer pause()
	var wg sync.WaitGroup
	dctx, stopDirect := context.WithCancel(ctx)
	defer stopDirect()
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for {
			jobs := live.Round()
			var jw sync.WaitGroup
			for _, j := range jobs {
				jw.Add(1)
				go func(j sources.Job) {
					defer jw.Done()
					jctx, c := context.WithTimeout(ctx, 950*time.Millisecond)
					defer c()
					j.Run(jctx)
				}(j)
			}
			jw.Wait()
			select {
			case <-dctx.Done():
				return
			case <-tk.C:
			}
		}
	}()

	b, err := New(srv.URL, config.HTTPClientConfig{}, Options{Window: itWindow, IgnoreRules: true})
	if err != nil {
		t.Fatal(err)
	}
	round := func() { roundOf(ctx, b) }

	start := time.Now()
	until := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }
	until(itPauseAt)
	pause()
	until(itPauseAt + itPause)
	resume()
	until(itRestartAt)
	f.Restart("prefill-0")
	round() // mid-run: the backend sees the fleet before and after the restart
	until(itFreezeAt)
	pause()
	// A round after the restart is visible to the server, as the
	// dashboard's refresh would have run: its restart scan gives the
	// event the final round's since-restart hit counts from.
	round()
	// Evaluate when the window starts in the middle of the pause; by then
	// both scrapers have read the frozen bodies several times.
	// Direct scraping stops there too, so its window (which ends at each
	// target's newest scrape) starts in the pause however long the
	// round below takes on a loaded machine.
	until(itPauseAt + itPause/2 + itWindow)
	stopDirect()
	wg.Wait()
	now := time.Now()
	round()
	direct := st.Snapshot(now, itWindow)
	prom := b.Snapshot(itWindow)
	// A second backend reading the recorded series of 'pdtop rules'.
	rb, err := New(srv.URL, config.HTTPClientConfig{}, Options{Window: itWindow})
	if err != nil {
		t.Fatal(err)
	}
	roundOf(ctx, rb)
	roundOf(ctx, rb)
	recorded := rb.Snapshot(itWindow)
	cancel()
	for _, fl := range b.server.failures {
		t.Errorf("query %s failed: %v\n%s", fl.name, fl.err, fl.query)
	}
	if prom.Targets[0].Health != sources.Up {
		t.Fatalf("prometheus target %v: %v\n%s", prom.Targets[0].Health, prom.Targets[0].LastError, srv.LogTail(2000))
	}

	if !rb.server.rules {
		t.Errorf("the recording rules were not used: %s\n%s", recorded.Targets[0].Generation, srv.LogTail(2000))
	}
	for _, fl := range rb.server.failures {
		t.Errorf("query %s failed with rules: %v\n%s", fl.name, fl.err, fl.query)
	}
	c := &comparison{t: t}
	c.rate("gateway requests/s", direct.Fleet.ReqRate, prom.Fleet.ReqRate)
	c.rate("input tokens/s (prefill pool)", direct.Fleet.InputRate, prom.Fleet.InputRate)
	c.rate("output tokens/s (decode pool)", direct.Fleet.OutputRate, prom.Fleet.OutputRate)
	c.hit("fleet prefix hit", direct.Fleet.Hit, prom.Fleet.Hit)
	for _, pool := range []struct {
		name string
		d, p *sources.PoolView
	}{{"decode pool", &direct.Decode, &prom.Decode}, {"prefill pool", &direct.Prefill, &prom.Prefill}} {
		for _, sig := range []sources.Signal{sources.SigTTFT, sources.SigITL} {
			if pool.d.Dists[sig].Present || pool.p.Dists[sig].Present {
				c.quantiles(pool.name+" "+sig.String(), pool.d.Dists[sig], pool.p.Dists[sig])
			}
		}
		for _, sig := range []sources.Signal{sources.SigWaiting, sources.SigRunning} {
			c.gauge(pool.name+" "+sig.String(), pool.d.Readings.Get(sig), pool.p.Readings.Get(sig))
		}
	}
	promWorkers := map[string]*sources.WorkerView{}
	for i := range prom.Workers {
		promWorkers[prom.Workers[i].Name] = &prom.Workers[i]
	}
	restarts := map[string]int{}
	for _, ts := range direct.Targets {
		restarts[ts.Name] = ts.Restarts
	}
	for i := range direct.Workers {
		d := &direct.Workers[i]
		p := promWorkers[byName[d.Name]]
		if p == nil {
			t.Errorf("%s (%s): no row through Prometheus", d.Name, byName[d.Name])
			continue
		}
		if p.Role != d.Role {
			t.Errorf("%s: role %v through Prometheus, %v direct", d.Name, p.Role, d.Role)
		}
		switch d.Role {
		case sources.RolePrefill:
			rateTol, hitTol := tolRate, tolHit
			if d.Name == "prefill-0" {
				rateTol, hitTol = tolRestartedRate, tolRestartedHit
			}
			c.rateWithin(d.Name+" prompt tokens/s", d.Readings.Get(sources.SigPromptTokens), p.Readings.Get(sources.SigPromptTokens), rateTol)
			// After a restart inside the window both rows count the new
			// process alone (HitRatio.Since); the window figure spans it.
			if !d.Hit.Since.IsZero() || !p.Hit.Since.IsZero() {
				c.since(d.Name, d.Hit, p.Hit)
				hitTol = tolRestartedHit
			} else {
				c.hitWithin(d.Name+" prefix hit", d.Hit, p.Hit, hitTol)
			}
			c.hitWithin(d.Name+" prefix hit, window", d.HitWindow, p.HitWindow, hitTol)
			for _, sig := range []sources.Signal{sources.SigWaiting, sources.SigBootstrapQueue, sources.SigInflightQueue} {
				c.gauge(d.Name+" "+sig.String(), d.Readings.Get(sig), p.Readings.Get(sig))
			}
		case sources.RoleDecode:
			c.rate(d.Name+" decode tokens/s", d.Readings.Get(sources.SigRealtimeDecode), p.Readings.Get(sources.SigRealtimeDecode))
			c.quantiles(d.Name+" ITL", d.Dist(sources.SigITL), p.Dist(sources.SigITL))
			for _, sig := range []sources.Signal{sources.SigRunning, sources.SigPreallocQueue, sources.SigTransferQueue, sources.SigKVUsage} {
				c.gauge(d.Name+" "+sig.String(), d.Readings.Get(sig), p.Readings.Get(sig))
			}
		}
		c.exact(d.Name+" restarts", float64(restarts[d.Name]), float64(p.Restarts))
	}
	// The same diagnoses from the same figures: one hit verdict per
	// replica and prefill worker, and the same findings' kinds.
	if len(direct.Diagnosis.Hits) != len(prom.Diagnosis.Hits) {
		t.Errorf("hit verdicts: %d direct, %d through Prometheus", len(direct.Diagnosis.Hits), len(prom.Diagnosis.Hits))
	}
	c.rate("capacity: decode pool served output tok/s", direct.Diagnosis.Capacity.Decode.Served, prom.Diagnosis.Capacity.Decode.Served)
	c.rate("capacity: prefill pool served tok/s", direct.Diagnosis.Capacity.Prefill.Served, prom.Diagnosis.Capacity.Prefill.Served)
	hostileRow := promWorkers[byName["decode-1"]]
	if hostileRow == nil || strings.ContainsAny(hostileRow.Name, "\x1b\x07\r\u202e") {
		t.Errorf("the worker with the hostile instance label: row %v", hostileRow != nil)
	}
	// The recording rules give the pool figures of the raw queries.
	c.rate("rules: input tokens/s", direct.Fleet.InputRate, recorded.Fleet.InputRate)
	c.rate("rules: output tokens/s", direct.Fleet.OutputRate, recorded.Fleet.OutputRate)
	c.hit("rules: fleet prefix hit", direct.Fleet.Hit, recorded.Fleet.Hit)
	c.quantiles("rules: decode pool ITL", direct.Decode.Dists[sources.SigITL], recorded.Decode.Dists[sources.SigITL])
	c.quantiles("rules: decode pool TTFT", direct.Decode.Dists[sources.SigTTFT], recorded.Decode.Dists[sources.SigTTFT])
	c.gauge("rules: decode pool running", direct.Decode.Readings.Get(sources.SigRunning), recorded.Decode.Readings.Get(sources.SigRunning))
	c.exact("rules: decode workers up", float64(direct.Decode.Up), float64(recorded.Decode.Up))
	// The drill-down's history of the restarted worker, from the server.
	if d := b.Detail(byName["prefill-0"], prom.Time, itWindow); d == nil {
		t.Error("no drill-down detail for prefill-0")
	} else {
		finite := func(pts []float64) (n int) {
			for _, v := range pts {
				if sources.Finite(v) {
					n++
				}
			}
			return n
		}
		// The run is under a minute long: a handful of 5 s chart steps.
		if finite(d.History[sources.SigWaiting]) < 5 || finite(d.History[sources.SigPromptTokens]) < 2 ||
			finite(d.P99[sources.SigTTFT]) < 2 || finite(d.HitHistory) < 2 || len(d.Restarts) != 1 {
			t.Errorf("drill-down detail: waiting %d, prompt %d, TTFT p99 %d, hit %d points; restarts %v",
				finite(d.History[sources.SigWaiting]), finite(d.History[sources.SigPromptTokens]),
				finite(d.P99[sources.SigTTFT]), finite(d.HitHistory), d.Restarts)
		}
	}
	if restarts["prefill-0"] != 1 {
		t.Errorf("direct scraping saw %d restarts of prefill-0, want 1 (the scripted one)", restarts["prefill-0"])
	}
	t.Logf("Prometheus backend vs direct scraping, window %s, demo fleet 2P/2D/1 smg, prefill-0 restarted inside the window:\n%s",
		itWindow, c.table())
}

// roundOf runs one refresh round of a backend, job after job.
func roundOf(ctx context.Context, b *Backend) {
	for _, j := range b.Round() {
		jctx, c := context.WithTimeout(ctx, 10*time.Second)
		j.Run(jctx)
		c()
	}
}

// comparison collects checked figures for the tolerance table.
type comparison struct {
	t    *testing.T
	rows []string
}

func (c *comparison) add(name string, d, p float64, ok bool, tol string) {
	c.t.Helper()
	mark := "ok"
	if !ok {
		mark = "FAIL"
		c.t.Errorf("%s: direct %.6g, Prometheus %.6g (tolerance %s)", name, d, p, tol)
	}
	diff := "0"
	if d != 0 {
		diff = fmt.Sprintf("%+.1f%%", 100*(p-d)/math.Abs(d))
	} else if p != 0 {
		diff = fmt.Sprintf("%+.3g", p-d)
	}
	c.rows = append(c.rows, fmt.Sprintf("| %-34s | %10.4g | %10.4g | %8s | %-9s | %s |", name, d, p, diff, tol, mark))
}

func (c *comparison) table() string {
	return "| figure                             |     direct | Prometheus |     diff | tolerance | |\n" +
		"|---|---:|---:|---:|---|---|\n" + strings.Join(c.rows, "\n")
}

func relOK(d, p, tol, floor float64) bool {
	return math.Abs(p-d) <= tol*math.Max(math.Abs(d), math.Abs(p))+floor
}

func (c *comparison) rate(name string, d, p sources.Reading) {
	c.t.Helper()
	c.rateWithin(name, d, p, tolRate)
}

func (c *comparison) rateWithin(name string, d, p sources.Reading, tol float64) {
	c.t.Helper()
	if !d.Present || !p.Present {
		c.t.Errorf("%s: present direct %v, Prometheus %v", name, d.Present, p.Present)
		return
	}
	c.add(name, d.Value, p.Value, relOK(d.Value, p.Value, tol, 1e-9), fmt.Sprintf("±%.0f%%", tol*100))
}

func (c *comparison) hit(name string, d, p sources.HitRatio) {
	c.t.Helper()
	c.hitWithin(name, d, p, tolHit)
}

func (c *comparison) hitWithin(name string, d, p sources.HitRatio, tol float64) {
	c.t.Helper()
	if !d.Present || !p.Present {
		c.t.Errorf("%s: present direct %v, Prometheus %v", name, d.Present, p.Present)
		return
	}
	c.add(name, d.Ratio, p.Ratio, math.Abs(d.Ratio-p.Ratio) <= tol, fmt.Sprintf("±%.2f", tol))
}

// since checks that both figures count since a restart, from about the
// same time.
func (c *comparison) since(name string, d, p sources.HitRatio) {
	c.t.Helper()
	if d.Since.IsZero() || p.Since.IsZero() {
		c.t.Errorf("%s: hit since the restart: direct since %v, Prometheus since %v", name, d.Since, p.Since)
		return
	}
	diff := p.Since.Sub(d.Since)
	c.add(name+" restart time (s)", 0, diff.Seconds(), diff <= tolSinceStart && diff >= -tolSinceStart,
		"±"+tolSinceStart.String())
	// The counts decide whether the figure is shown (under
	// sources.MinTokensSinceRestart it is n/a), so they are compared
	// whether or not it is.
	if d.Present != p.Present {
		c.t.Errorf("%s: hit since the restart present: direct %v (%.0f tokens), Prometheus %v (%.0f tokens)",
			name, d.Present, d.Total, p.Present, p.Total)
	}
	if d.Total <= 0 || p.Total <= 0 {
		c.t.Errorf("%s: prompt tokens since the restart: direct %v, Prometheus %v", name, d.Total, p.Total)
		return
	}
	tol := fmt.Sprintf("±%.0f%%", tolSinceTokens*100)
	c.add(name+" prompt tokens since restart", d.Total, p.Total, relOK(d.Total, p.Total, tolSinceTokens, 0), tol)
	dr, pr := d.Hit/d.Total, p.Hit/p.Total
	c.add(name+" prefix hit since restart", dr, pr, math.Abs(dr-pr) <= tolSinceHit, fmt.Sprintf("±%.2f", tolSinceHit))
}

func (c *comparison) quantiles(name string, d, p sources.Quantiles) {
	c.t.Helper()
	if !d.Present || !p.Present {
		c.t.Errorf("%s: present direct %v, Prometheus %v", name, d.Present, p.Present)
		return
	}
	tol := fmt.Sprintf("±%.0f%%", tolQuantile*100)
	c.add(name+" p50", d.P50, p.P50, relOK(d.P50, p.P50, tolQuantile, 1e-4), tol)
	c.add(name+" p99", d.P99, p.P99, relOK(d.P99, p.P99, tolQuantile, 1e-4), tol)
}

func (c *comparison) gauge(name string, d, p sources.Reading) {
	c.t.Helper()
	if d.Present != p.Present {
		c.t.Errorf("%s: present direct %v, Prometheus %v", name, d.Present, p.Present)
		return
	}
	c.add(name, d.Value, p.Value, math.Abs(d.Value-p.Value) <= tolGauge+1e-9, "exact")
}

func (c *comparison) exact(name string, d, p float64) {
	c.t.Helper()
	c.add(name, d, p, d == p, "exact")
}
