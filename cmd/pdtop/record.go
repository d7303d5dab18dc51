package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/record"
)

// recorder writes a recording while pdtop scrapes (pdtop record, or
// --record while viewing).
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

// attach makes live keep every body and record every result it ingests
// (then hands it to the previous observer), and returns the backend to
// run: live, recording the target list whenever it changes (flags, the
// config file, discovery, the demo following scale-out) at each round.
func (r *recorder) attach(live *collect.Live) sources.Backend {
	live.Scraper.KeepBodies(true)
	next := live.Observe
	live.Observe = func(t sources.Target, res sources.ScrapeResult) {
		r.w.Result(t, res)
		if next != nil {
			next(t, res)
		}
	}
	return &recordingBackend{Live: live, r: r}
}

// recordingBackend records the target list before each round that sees
// it changed.
type recordingBackend struct {
	*collect.Live
	r    *recorder
	mu   sync.Mutex
	last []sources.Target
}

// Round records a changed target list, then returns live's jobs.
func (b *recordingBackend) Round() []sources.Job {
	ts := b.Live.Store.Targets()
	b.mu.Lock()
	if !slices.Equal(ts, b.last) {
		b.last = ts
		b.r.w.Targets(b.Live.Now(), ts)
	}
	b.mu.Unlock()
	return b.Live.Round()
}

// close flushes and closes the recording.
func (r *recorder) close() error {
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

// closeAndReport closes the recording after the dashboard and says on
// stderr (the terminal is back by then) what was written, or why not.
func (r *recorder) closeAndReport(logger *slog.Logger) {
	if err := r.close(); err != nil {
		logger.Error("recording failed", "error", err.Error())
		fmt.Fprintln(os.Stderr, "pdtop:", err)
		return
	}
	fmt.Fprintf(os.Stderr, "pdtop: recorded to %s: %s\n", r.path, r.summary())
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
	// "demo" may come first or after flags ("pdtop record -o x.pdrec demo").
	args, demoMode := demoArg(args, func(fs *flag.FlagSet) {
		var vf viewFlags
		var tf targetFlags
		vf.registerScrape(fs)
		tf.register(fs)
		fs.String("o", "", "")
		fs.Bool("demo", false, "")
		fs.Duration("duration", 0, "") // the demo's flags all take a value
	})
	for _, a := range args {
		if a == "--demo" || a == "-demo" || a == "--demo=true" || a == "-demo=true" {
			demoMode = true
		}
	}
	vf.registerScrape(fs)
	if demoMode {
		sf.register(fs)
	} else {
		tf.register(fs)
	}
	out := fs.String("o", "", "write the recording to this `file` (required; never overwritten)")
	fs.Bool("demo", false, "record the embedded demo fleet instead of target URLs (same as 'pdtop record demo'; takes the demo's --scenario, --speed … flags)")
	duration := fs.Duration("duration", 0, "stop after this `long` (default: until Ctrl-C)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: pdtop record -o FILE [target flags] [flags]
       pdtop record demo -o FILE [demo flags]

Scrapes the targets like the dashboard does (discovery and the config file
included), without drawing, and writes every raw scrape with its receive time
to FILE (gzip'd, flushed every second) until Ctrl-C or --duration. Play it
back with 'pdtop replay FILE'.

`)
		fs.PrintDefaults()
		if demoMode {
			fmt.Fprint(fs.Output(), scenarioHelp())
		} else {
			fmt.Fprint(fs.Output(), "\n'pdtop record demo -h' lists the demo's flags (--scenario, --speed, --prefill N …).\n")
		}
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fmt.Fprintln(stderr, "pdtop record: -o FILE is required")
		return errUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	var fl *fleet
	if demoMode {
		if err := vf.validate(); err != nil {
			return err
		}
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
		fl = demoFleet(f, eps)
	} else {
		var err error
		if fl, err = liveFleet(fs, &vf, &tf, true); err != nil {
			return err
		}
	}
	logger, closeLog, err := openLog(vf.logFile, fl.secrets)
	if err != nil {
		return err
	}
	defer closeLog()
	live, start, err := fl.backend(vf, logger, nil)
	if err != nil {
		return err
	}
	rec, err := createRecording(*out, vf.interval)
	if err != nil {
		return err
	}
	backend := rec.attach(live)
	start(ctx)
	fmt.Fprintf(stderr, "recording every %s to %s — Ctrl-C stops\n", vf.interval, *out)
	headless(ctx, backend, vf.interval, vf.timeout, func(elapsed time.Duration) {
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
