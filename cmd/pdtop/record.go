package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/record"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
)

// recorder writes a recording while pdtop scrapes (pdtop record, or
// --record while viewing). A nil *recorder does nothing.
type recorder struct {
	path string
	f    *os.File
	w    *record.Writer
}

// createRecording opens path for a new recording; it refuses to replace
// an existing file. The file is private (0600): bodies may say more about
// a fleet than its owner wants shared.
func createRecording(path string, interval time.Duration) (*recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s already exists: remove it or choose another name", path)
		}
		return nil, err
	}
	w, err := record.NewWriter(f, record.Options{Interval: interval})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &recorder{path: path, f: f, w: w}, nil
}

// tap is the scraper's Tap (nil when not recording).
func (r *recorder) tap() func(sources.Target, sources.ScrapeResult, []byte, []string) {
	if r == nil {
		return nil
	}
	return r.w.Scrape
}

// observe records skipped ticks, then passes every result to next.
func (r *recorder) observe(next func(sources.Target, sources.ScrapeResult)) func(sources.Target, sources.ScrapeResult) {
	if r == nil {
		return next
	}
	return func(t sources.Target, res sources.ScrapeResult) {
		if res.Skipped {
			r.w.Skipped(res.TargetID, res.Time)
		}
		if next != nil {
			next(t, res)
		}
	}
}

// targets records a new target list.
func (r *recorder) targets(at time.Time, ts []sources.Target) {
	if r != nil {
		r.w.Targets(at, ts)
	}
}

// close flushes and closes the recording and says what was written.
func (r *recorder) close() error {
	if r == nil {
		return nil
	}
	werr := r.w.Close()
	cerr := r.f.Close()
	if werr != nil {
		return fmt.Errorf("recording %s: %v", r.path, werr)
	}
	if cerr != nil {
		return fmt.Errorf("recording %s: %v", r.path, cerr)
	}
	return nil
}

func (r *recorder) summary() string {
	n, b := r.w.Stats()
	return fmt.Sprintf("%d records, %s", n, formatSize(b))
}

func formatSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// runRecord is `pdtop record -o FILE`: scrape the targets (or the demo
// fleet) headless and write every raw scrape to FILE until Ctrl-C or
// --duration.
func runRecord(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pdtop record", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var vf viewFlags
	var tf targetFlags
	var sf simFlags
	// The demo fleet's flags (--prefill N …) and the target flags
	// (--prefill URL …) share names: "demo" (or --demo) picks the set.
	demoMode := false
	if len(args) > 0 && args[0] == "demo" {
		demoMode, args = true, args[1:]
	}
	for _, a := range args {
		if a == "--demo" || a == "-demo" || a == "--demo=true" || a == "-demo=true" {
			demoMode = true
		}
	}
	vf.register(fs)
	if demoMode {
		sf.register(fs)
	} else {
		tf.register(fs)
	}
	out := fs.String("o", "", "write the recording to this `file` (required; never overwritten)")
	demo := fs.Bool("demo", false, "record the embedded demo fleet instead of target URLs (same as 'pdtop record demo'; takes the demo's --scenario, --speed … flags)")
	duration := fs.Duration("duration", 0, "stop after this `long` (default: until Ctrl-C)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: pdtop record -o FILE [target flags] [flags]
       pdtop record demo -o FILE [demo flags]

Scrapes the targets like the dashboard does, without drawing, and writes every
raw scrape with its receive time to FILE (gzip'd, flushed every second) until
Ctrl-C or --duration. Play it back with 'pdtop replay FILE'.

`)
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fmt.Fprintln(stderr, "pdtop record: -o FILE is required")
		return errUsage
	}
	if err := vf.validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	var targets []sources.Target
	var follow func(set func([]sources.Target))
	if *demo || demoMode {
		f, err := sf.fleet()
		if err != nil {
			return err
		}
		eps, err := f.Serve("127.0.0.1")
		if err != nil {
			return fmt.Errorf("demo fleet: %v", err)
		}
		defer f.Close()
		go f.Run(ctx, sf.speed)
		targets = demoTargets(eps)
		follow = followDemo(ctx, f)
	} else {
		var err error
		if targets, err = tf.targets(); err != nil {
			return err
		}
	}
	rec, err := createRecording(*out, vf.interval)
	if err != nil {
		return err
	}
	st := store.New(store.Options{Interval: vf.interval})
	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: vf.timeout})
	if err != nil {
		rec.close()
		return err
	}
	now := time.Now()
	st.SetTargets(now, targets)
	rec.targets(now, st.Targets())
	if follow != nil {
		go follow(func(ts []sources.Target) {
			now := time.Now()
			st.SetTargets(now, ts)
			rec.targets(now, st.Targets())
		})
	}
	live := &collect.Live{Store: st, Scraper: collect.New(client, collect.Options{Timeout: vf.timeout, Tap: rec.tap()}),
		Observe: rec.observe(nil)}
	fmt.Fprintf(stderr, "recording %d targets every %s to %s — Ctrl-C stops\n", len(targets), vf.interval, *out)
	headless(ctx, live, vf.interval, vf.timeout, func(elapsed time.Duration) {
		s := live.Snapshot(vf.window)
		fmt.Fprintf(stderr, "  %s  %d/%d targets up  %s\n", fmtClock(elapsed), s.Fleet.TargetsUp, s.Fleet.Targets, rec.summary())
	})
	s := live.Snapshot(vf.window)
	err = rec.close()
	fmt.Fprintf(stdout, "wrote %s: %s\n", *out, rec.summary())
	if err != nil {
		return err
	}
	if s.Fleet.TargetsUp == 0 {
		return fmt.Errorf("no target answered at the end of the recording (it still holds the errors)")
	}
	return nil
}

// headless runs scrape rounds every interval until ctx ends: one job per
// key, a job still running at the next tick skipped (reported to the
// backend as busy), never queued. report is called every 5 seconds.
func headless(ctx context.Context, b sources.Backend, interval, timeout time.Duration, report func(time.Duration)) {
	var mu sync.Mutex
	inflight := map[string]bool{}
	var wg sync.WaitGroup
	t := time.NewTicker(interval)
	defer t.Stop()
	began, lastReport := time.Now(), time.Now()
	round := func() {
		for _, j := range b.Round() {
			mu.Lock()
			busy := inflight[j.Key]
			if !busy {
				inflight[j.Key] = true
			}
			mu.Unlock()
			if busy {
				b.Busy(j.Key)
				continue
			}
			wg.Add(1)
			go func(j sources.Job) {
				defer wg.Done()
				// Not ctx: a scrape under way when recording stops finishes
				// (within its timeout) and is recorded as what it was.
				jctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				j.Run(jctx)
				mu.Lock()
				delete(inflight, j.Key)
				mu.Unlock()
			}(j)
		}
	}
	round()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-t.C:
			round()
			if time.Since(lastReport) >= 5*time.Second {
				lastReport = time.Now()
				report(time.Since(began))
			}
		}
	}
}
