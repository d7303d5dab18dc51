package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/promql"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
	"github.com/pdtop/pdtop/ui"
)

// result is what one measurement child reports (JSON on stdout).
type result struct {
	Mode      string  `json:"mode"`
	Workers   int     `json:"workers"`
	Seconds   float64 `json:"seconds"`
	CPUPerSec float64 `json:"cpu_per_sec"` // CPU-seconds per wall-second
	MaxRSSMB  float64 `json:"max_rss_mb"`
	Rounds    int     `json:"rounds"`
	// Cycle is the refresh cycle: a whole scrape round (direct) or the
	// instant-query job (Prometheus), p50 and p99; History the range job.
	CycleP50ms   float64 `json:"cycle_p50_ms"`
	CycleP99ms   float64 `json:"cycle_p99_ms"`
	HistoryP99ms float64 `json:"history_p99_ms,omitempty"`
	Skipped      int     `json:"skipped"` // jobs still running at a tick (skipped, not queued)
	RoundP50ms   float64 `json:"round_p50_ms"`
	RoundP99ms   float64 `json:"round_p99_ms"`
	SnapP99ms    float64 `json:"snapshot_p99_ms"`
	FrameP50ms   float64 `json:"frame_p50_ms"`
	FrameP99ms   float64 `json:"frame_p99_ms"`
	FleetShown   int     `json:"fleet_targets"` // targets the snapshot accounts for
	RowsShown    int     `json:"rows"`          // worker rows in the snapshot
	ServerState  string  `json:"server_state,omitempty"`
	Slowest      string  `json:"slowest,omitempty"` // Prometheus backend: the slowest queries' last durations
}

// measure runs pdtop headless — the backend, snapshot derivation and the
// whole dashboard rendered at 200x60 after every round, no terminal — at
// a 1 s refresh for the given time, and reports its own cost.
func measure(args []string) error {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	mode := fs.String("mode", "direct", "direct or prometheus")
	targetsFile := fs.String("targets", "", "direct: JSON file of targets")
	url := fs.String("url", "", "prometheus: server URL")
	dur := fs.Duration("duration", time.Minute, "measured time")
	warm := fs.Duration("warmup", 10*time.Second, "time run before measuring CPU")
	window := fs.Duration("window", time.Minute, "the dashboard's window")
	workers := fs.Int("workers", 0, "fleet size (for the report)")
	ignoreRules := fs.Bool("ignore-rules", false, "prometheus: never read recorded series")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var backend sources.Backend
	timeout := 900 * time.Millisecond
	switch *mode {
	case "direct":
		var targets []sources.Target
		b, err := os.ReadFile(*targetsFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &targets); err != nil {
			return err
		}
		client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: timeout})
		if err != nil {
			return err
		}
		st := store.New(store.Options{Interval: time.Second})
		st.SetTargets(time.Now(), targets)
		backend = &collect.Live{Store: st, Scraper: collect.New(client, collect.Options{Timeout: timeout})}
	case "prometheus":
		b, err := promql.New(*url, config.HTTPClientConfig{}, promql.Options{Window: *window, IgnoreRules: *ignoreRules})
		if err != nil {
			return err
		}
		backend, timeout = b, 10*time.Second
	default:
		return fmt.Errorf("unknown mode %q", *mode)
	}
	m := ui.New(ui.Config{Backend: backend, Interval: time.Second, Timeout: timeout, Window: *window,
		Styles: themes.NewStyles(themes.Dark())})

	var (
		mu                   sync.Mutex
		inflight             = map[string]bool{}
		rounds, skipped      int
		roundT, snapT, frame []time.Duration
		jobT                 = map[string][]time.Duration{}
		last                 *sources.Snapshot
		renderMu             sync.Mutex
		wg                   sync.WaitGroup
	)
	start := time.Now()
	measuring := false
	var cpu0 float64
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	for now := start; now.Sub(start) < *warm+*dur; now = <-tk.C {
		if !measuring && now.Sub(start) >= *warm {
			measuring, cpu0 = true, cpuSeconds()
			mu.Lock()
			rounds, skipped, roundT, snapT, frame = 0, 0, nil, nil, nil
			jobT = map[string][]time.Duration{}
			mu.Unlock()
		}
		t0 := time.Now()
		var jw sync.WaitGroup
		roundSkipped := false
		for _, j := range backend.Round() {
			mu.Lock()
			busy := inflight[j.Key]
			if !busy {
				inflight[j.Key] = true
			}
			mu.Unlock()
			if busy {
				roundSkipped = true
				backend.Busy(j.Key)
				mu.Lock()
				skipped++
				mu.Unlock()
				continue
			}
			jw.Add(1)
			go func(j sources.Job) {
				defer jw.Done()
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				js := time.Now()
				j.Run(ctx)
				cancel()
				mu.Lock()
				delete(inflight, j.Key)
				jobT[j.Key] = append(jobT[j.Key], time.Since(js))
				mu.Unlock()
			}(j)
		}
		wg.Add(1)
		go func(complete bool) {
			defer wg.Done()
			jw.Wait()
			rt := time.Since(t0)
			renderMu.Lock()
			defer renderMu.Unlock()
			t1 := time.Now()
			s := backend.Snapshot(*window)
			t2 := time.Now()
			_ = m.Frame(s, 200, 60)
			t3 := time.Now()
			mu.Lock()
			rounds++
			if complete {
				roundT = append(roundT, rt)
			}
			snapT = append(snapT, t2.Sub(t1))
			frame = append(frame, t3.Sub(t2))
			last = s
			mu.Unlock()
		}(!roundSkipped)
	}
	cpu1 := cpuSeconds()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	r := result{Mode: *mode, Workers: *workers, Seconds: dur.Seconds(), CPUPerSec: (cpu1 - cpu0) / dur.Seconds(),
		MaxRSSMB: maxRSSMB(), Rounds: rounds, Skipped: skipped,
		RoundP50ms: pct(roundT, 0.5), RoundP99ms: pct(roundT, 0.99), SnapP99ms: pct(snapT, 0.99),
		CycleP50ms: pct(roundT, 0.5), CycleP99ms: pct(roundT, 0.99),
		FrameP50ms: pct(frame, 0.5), FrameP99ms: pct(frame, 0.99)}
	if last != nil {
		r.FleetShown, r.RowsShown = last.Fleet.Targets, len(last.Workers)
		if *mode == "prometheus" && len(last.Targets) > 0 {
			r.ServerState = last.Targets[0].Health.String() + " " + last.Targets[0].Generation
			if e := last.Targets[0].LastError; e != nil {
				r.ServerState += ": " + e.Error()
			}
		}
	}
	if now := jobT["promql:now"]; len(now) > 0 {
		r.CycleP50ms, r.CycleP99ms = pct(now, 0.5), pct(now, 0.99)
		r.HistoryP99ms = pct(jobT["promql:history"], 0.99)
	}
	if pb, ok := backend.(*promql.Backend); ok {
		r.Slowest = slowestQueries(pb.QueryTimes(), 5)
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// slowestQueries lists the n slowest queries, "name 1.2s, …".
func slowestQueries(qt map[string]time.Duration, n int) string {
	names := make([]string, 0, len(qt))
	for k := range qt {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return qt[names[i]] > qt[names[j]] })
	var parts []string
	for i, k := range names {
		if i == n {
			break
		}
		parts = append(parts, k+" "+qt[k].Round(time.Millisecond).String())
	}
	return strings.Join(parts, ", ")
}

func pct(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q * float64(len(s)-1))
	return float64(s[i]) / float64(time.Millisecond)
}

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// maxRSSMB is this process's peak resident set (Linux reports KiB).
func maxRSSMB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}
