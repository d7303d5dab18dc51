package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"
	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
	"github.com/pdtop/pdtop/ui"
)

func runLive(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pdtop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var vf viewFlags
	var tf targetFlags
	var pf promFlags
	vf.register(fs)
	tf.register(fs)
	pf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: pdtop --gateway URL --prefill URL … --decode URL … [flags]\n"+
			"       pdtop --prometheus URL [--selector '{namespace=\"serving\"}'] [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if pf.set() && vf.timeout == 0 {
		vf.timeout = promTimeout
	}
	if err := vf.validate(); err != nil {
		return err
	}
	if err := pf.validate(); err != nil {
		return err
	}
	if pf.set() {
		if tf.any() {
			return fmt.Errorf("--prometheus reads the fleet from the server: drop the --gateway/--prefill/--decode/--worker flags (or drop --prometheus to scrape them directly)")
		}
		return runPrometheusDashboard(context.Background(), pf, vf, stdout)
	}
	targets, err := tf.targets()
	if err != nil {
		return err
	}
	return dashboard(context.Background(), targets, vf, stdout)
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	return nil
}

// pickTheme honours --theme, then NO_COLOR and TERM=dumb.
func pickTheme(name string) (themes.Theme, error) {
	if name == "" {
		if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
			return themes.Mono(), nil
		}
		return themes.Dark(), nil
	}
	t, ok := themes.ByName(name)
	if !ok {
		return themes.Theme{}, fmt.Errorf("--theme %q: unknown theme (have %v)", name, themes.Names())
	}
	return t, nil
}

// dashboard scrapes targets and runs the TUI until the user quits.
func dashboard(ctx context.Context, targets []sources.Target, vf viewFlags, stdout io.Writer) error {
	return dashboardWith(ctx, targets, vf, stdout, nil)
}

// dashboardWith is dashboard with an optional follower that may replace
// the target list while the TUI runs.
func dashboardWith(ctx context.Context, targets []sources.Target, vf viewFlags, stdout io.Writer,
	follow func(set func([]sources.Target))) error {
	return runUI(ctx, vf, stdout, func(logger *slog.Logger) (sources.Backend, error) {
		client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: vf.timeout})
		if err != nil {
			return nil, err
		}
		scraper := collect.New(client, collect.Options{Timeout: vf.timeout})
		st := store.New(store.Options{Interval: vf.interval})
		st.SetTargets(time.Now(), targets)
		logger.Info("pdtop started", "targets", len(targets), "interval", vf.interval, "window", vf.window)
		if follow != nil {
			go follow(func(ts []sources.Target) { st.SetTargets(time.Now(), ts) })
		}
		return &collect.Live{Store: st, Scraper: scraper, Observe: logFailures(logger)}, nil
	})
}

// runUI opens the log, builds the backend and runs the TUI on it until
// the user quits. Every mode that shows the dashboard goes through it.
func runUI(ctx context.Context, vf viewFlags, stdout io.Writer, backend func(*slog.Logger) (sources.Backend, error)) error {
	if f, ok := stdout.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		return fmt.Errorf("stdout is not a terminal: pdtop draws a full-screen dashboard; use 'pdtop snapshot' (same target flags) for text or JSON")
	}
	theme, err := pickTheme(vf.theme)
	if err != nil {
		return err
	}
	logger, closeLog, err := openLog(vf.logFile)
	if err != nil {
		return err
	}
	defer closeLog()
	b, err := backend(logger)
	if err != nil {
		return err
	}
	m := ui.New(ui.Config{
		Backend:  b,
		Interval: vf.interval,
		Timeout:  vf.timeout,
		Window:   vf.window,
		Styles:   themes.NewStyles(theme),
	})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithFPS(20))
	_, err = p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

func openLog(path string) (*slog.Logger, func(), error) {
	if path == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil)), func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--log: %v", err)
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { f.Close() }, nil
}

// logFailures logs each target's failures when its error class changes
// and its recovery, not every failed tick.
func logFailures(l *slog.Logger) func(sources.Target, sources.ScrapeResult) {
	var mu sync.Mutex
	last := map[string]sources.ErrorClass{}
	return func(t sources.Target, r sources.ScrapeResult) {
		if r.Skipped {
			return
		}
		class := sources.ErrNone
		if r.Err != nil {
			class = r.Err.Class
		}
		mu.Lock()
		prev, seen := last[t.ID]
		last[t.ID] = class
		mu.Unlock()
		switch {
		case class != sources.ErrNone && class != prev:
			l.Warn("scrape failed", "target", t.ID, "role", t.Role.String(), "class", string(class), "error", r.Err.Message)
		case class == sources.ErrNone && seen && prev != sources.ErrNone:
			l.Info("scrape recovered", "target", t.ID)
		}
	}
}
