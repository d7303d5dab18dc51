package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"

	"github.com/pdtop/pdtop/panels"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/snapjson"
	"github.com/pdtop/pdtop/themes"
)

// snapFlags configure pdtop snapshot.
type snapFlags struct {
	window, interval, timeout time.Duration
	format                    string
	width                     int
}

func (s *snapFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&s.window, "window", 10*time.Second, "how long to scrape; also the `window` for rates, quantiles and hit ratios")
	fs.DurationVar(&s.interval, "interval", time.Second, "scrape every target this often (`interval`)")
	fs.DurationVar(&s.timeout, "timeout", 0, "per-scrape `deadline`, at most --interval (default: 90% of --interval, at least 500ms)")
	fs.StringVar(&s.format, "format", "text", "output `format`: text (the six panels as plain text) or json (docs/snapshot.schema.json)")
	fs.IntVar(&s.width, "width", 0, "text width in `columns` (default: the terminal's, else 120)")
}

func (s *snapFlags) validate() error {
	if s.format != "text" && s.format != "json" {
		return fmt.Errorf("--format %q: use text or json", s.format)
	}
	if s.interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s is too short (minimum 100ms)", s.interval)
	}
	if s.window < 2*s.interval {
		return fmt.Errorf("--window %s must cover at least two scrapes (%s): rates need two samples", s.window, 2*s.interval)
	}
	if s.window > 15*time.Minute {
		return fmt.Errorf("--window %s is longer than the 15m of history pdtop keeps", s.window)
	}
	if s.timeout == 0 {
		s.timeout = defaultTimeout(s.interval)
	}
	if err := checkTimeout(s.timeout, s.interval); err != nil {
		return err
	}
	if s.width != 0 && (s.width < 40 || s.width > 1000) {
		return fmt.Errorf("--width %d: use 40 to 1000 columns", s.width)
	}
	return nil
}

const snapshotUsage = `Usage: pdtop snapshot [target flags] [flags]
       pdtop snapshot --prometheus URL [--selector …] [flags]
       pdtop snapshot demo [demo flags] [flags]

Scrapes the targets for --window, then prints the six panels as plain text
(for tickets) or as JSON (for scripts; schema in docs/snapshot.schema.json),
and exits. Exits 1 with the reasons when no target answered (as soon as
every target has failed its first 3 scrapes).

`

func runSnapshot(args []string, stdout, stderr io.Writer) error {
	// "demo" may come first or after flags ("pdtop snapshot --window 5s demo").
	args, demo := demoArg(args, func(fs *flag.FlagSet) {
		var snf snapFlags
		var tf targetFlags
		snf.register(fs)
		tf.register(fs) // the demo's flags all take a value
	})
	fs := flag.NewFlagSet("pdtop snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var snf snapFlags
	var tf targetFlags
	var sf simFlags
	var pf promFlags
	snf.register(fs)
	if demo {
		sf.register(fs)
	} else {
		tf.register(fs)
		pf.register(fs)
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), snapshotUsage)
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := snf.validate(); err != nil {
		return err
	}
	ctx := context.Background()
	if !demo && (pf.set() || usesPrometheus(tf.config)) {
		vf := viewFlags{interval: snf.interval, timeout: promTimeout, window: snf.window}
		ps, err := prometheusSetup(fs, pf, vf, tf, false)
		if err != nil {
			return err
		}
		snap, err := prometheusSnapshot(ctx, ps)
		if err != nil {
			return err
		}
		return printSnapshot(snap, snf, stdout)
	}
	if !demo {
		if err := pf.validate(); err != nil { // --selector without --prometheus, …
			return err
		}
	}
	var fl *fleet
	if demo {
		f, err := sf.fleet()
		if err != nil {
			return err
		}
		eps, err := f.Serve("127.0.0.1")
		if err != nil {
			return fmt.Errorf("demo fleet: %v", err)
		}
		defer f.Close()
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		go f.Run(c, sf.speed)
		fl = demoFleet(f, eps)
	} else {
		var err error
		vf := viewFlags{interval: snf.interval, timeout: snf.timeout, window: snf.window}
		if fl, err = liveFleet(fs, &vf, &tf, false); err != nil {
			return err
		}
	}
	if isTerminal(stderr) {
		// Nothing else is printed for --window: say what is going on.
		what := fmt.Sprintf("%d targets", len(fl.targets))
		if fl.demo {
			what = "the demo fleet"
		} else if len(fl.gateways) > 0 {
			what += " and the workers their gateways list"
		}
		fmt.Fprintf(stderr, "pdtop: collecting %s from %s (every %s)…\n", span(snf.window), what, snf.interval)
	}
	snap, err := collectSnapshot(ctx, fl, snf)
	if err != nil {
		return err
	}
	return printSnapshot(snap, snf, stdout)
}

// printSnapshot writes the snapshot as --format says.
func printSnapshot(snap *sources.Snapshot, snf snapFlags, stdout io.Writer) error {
	if snf.format == "json" {
		b, err := snapjson.Marshal(snap)
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	_, err := io.WriteString(stdout, snapshotText(snap, textWidth(snf.width, stdout)))
	return err
}

// errNoTarget is returned when no target answered during the window.
var errNoTarget = errors.New("no target answered")

// collectSnapshot scrapes every target each interval for the window (at
// least two rounds, so rates exist) and derives the snapshot over it.
// Rounds keep their schedule: a target whose previous scrape is still
// running is marked slow for that round, not waited for, so the whole run
// takes the window plus at most one timeout, however slow the targets.
// When no target has ever answered and each has failed its first
// giveUpAfter scrapes, it stops early with the error.
func collectSnapshot(ctx context.Context, fl *fleet, f snapFlags) (*sources.Snapshot, error) {
	vf := viewFlags{interval: f.interval, timeout: f.timeout, window: f.window}
	live, _, err := fl.backend(vf, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		return nil, err
	}
	if fl.disco != nil {
		// One worker-list pass first, so the workers are scraped from the
		// first round.
		fl.disco.Refresh(ctx)
	}
	rounds := int(f.window/f.interval) + 1
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	busy := map[string]bool{}
	tries := map[string]int{} // finished scrapes per job key (target ID)
	gaveUp := false
	for i := 0; i < rounds; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * f.interval)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				wg.Wait()
				return nil, ctx.Err()
			}
		}
		if i >= giveUpAfter && !gaveUp {
			mu.Lock()
			gaveUp = allFailing(live.Snapshot(f.window), tries)
			mu.Unlock()
			if gaveUp {
				break
			}
		}
		for _, j := range live.Round() {
			mu.Lock()
			skip := busy[j.Key]
			busy[j.Key] = true
			mu.Unlock()
			if skip {
				live.Busy(j.Key) // one scrape in flight per target, as in the dashboard
				continue
			}
			wg.Add(1)
			go func(j sources.Job) {
				defer wg.Done()
				c, cancel := context.WithTimeout(ctx, f.timeout+250*time.Millisecond)
				defer cancel()
				j.Run(c)
				mu.Lock()
				delete(busy, j.Key)
				tries[j.Key]++
				mu.Unlock()
			}(j)
		}
	}
	wg.Wait()
	snap := live.Snapshot(f.window)
	answered := 0
	var why []string
	for _, t := range snap.Targets {
		if !t.LastSuccess.IsZero() {
			answered++
		} else if t.LastError != nil {
			why = append(why, fmt.Sprintf("  %s (%s): %s", t.ID, t.Role, t.LastError.Error()))
		}
	}
	if answered == 0 {
		if gaveUp {
			return nil, fmt.Errorf("%w: the first %d scrapes of every target failed (stopped after %s of the %s window):\n%s",
				errNoTarget, giveUpAfter, span(time.Since(start)), span(f.window), strings.Join(why, "\n"))
		}
		return nil, fmt.Errorf("%w in %s:\n%s", errNoTarget, f.window, strings.Join(why, "\n"))
	}
	return snap, nil
}

// giveUpAfter is how many failed scrapes of every target, none of which
// ever answered, end pdtop snapshot before its window: waiting longer
// would only delay the same error.
const giveUpAfter = 3

// allFailing reports whether no target of snap has ever answered and each
// has failed at least giveUpAfter finished scrapes (tries, by target ID).
// A target still pending (a scrape that has not finished, a worker just
// discovered) keeps the window going.
func allFailing(snap *sources.Snapshot, tries map[string]int) bool {
	if len(snap.Targets) == 0 {
		return false
	}
	for _, t := range snap.Targets {
		if !t.LastSuccess.IsZero() || t.LastError == nil || tries[t.ID] < giveUpAfter {
			return false
		}
	}
	return true
}

// textWidth is --width, else the terminal's, else 120.
func textWidth(flagWidth int, stdout io.Writer) int {
	if flagWidth > 0 {
		return flagWidth
	}
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(f.Fd()) {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w >= 40 {
			return w
		}
	}
	return 120
}

// snapshotText is the snapshot for a ticket: a heading, the summary line,
// every threshold crossing and finding, the six panels and the capacity
// view, in plain text.
func snapshotText(s *sources.Snapshot, w int) string {
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.Ascii)
	defer lipgloss.SetColorProfile(prev)
	st := themes.NewStyles(themes.Mono())
	var b strings.Builder
	fmt.Fprintf(&b, "pdtop snapshot · %s · window %s\n", s.Time.UTC().Format("2006-01-02 15:04:05 MST"), s.Window)
	b.WriteString(strings.TrimRight(panels.Summary(s, st, w, panels.SummaryState{Window: s.Window, Label: "snapshot", NoCharts: true}), " "))
	b.WriteString("\n")
	if cs := s.Crossings(); len(cs) > 0 {
		b.WriteString("\nOver threshold:\n")
		for _, c := range cs {
			b.WriteString("  ! " + panels.CrossingText(c) + "\n")
		}
	}
	if fs := panels.FindingLines(s); len(fs) > 0 {
		b.WriteString("\nFindings:\n")
		for _, f := range fs {
			b.WriteString("  " + f + "\n")
		}
	}
	for id := panels.ID(0); id < panels.NumPanels; id++ {
		b.WriteString("\n")
		for _, l := range strings.Split(panels.Print(id, s, st, w), "\n") {
			b.WriteString(strings.TrimRight(l, " ") + "\n")
		}
	}
	if c := panels.PrintCapacity(s, st, w); c != "" {
		b.WriteString("\n")
		for _, l := range strings.Split(c, "\n") {
			b.WriteString(strings.TrimRight(l, " ") + "\n")
		}
	}
	return b.String()
}

// isTerminal reports whether w is a terminal (progress messages go to
// stderr only then, so scripts' logs stay clean).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// span formats a duration briefly: "10s", "1m30s", "2m".
func span(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}
