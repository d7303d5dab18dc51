package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"
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
	vf.register(fs)
	vf.registerRecord(fs)
	tf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: pdtop --gateway URL --prefill URL … --decode URL … [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := vf.validate(); err != nil {
		return err
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
	return dashboardWith(ctx, targets, vf, stdout, nil, nil)
}

// dashboardWith is dashboard with an optional follower that may replace
// the target list while the TUI runs.
// notice, when set, supplies the footer's notice line (the demo scenario).
func dashboardWith(ctx context.Context, targets []sources.Target, vf viewFlags, stdout io.Writer,
	notice func() string, follow func(set func([]sources.Target))) error {
	if f, ok := stdout.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		return fmt.Errorf("stdout is not a terminal: pdtop draws a full-screen dashboard; use 'pdtop snapshot' (same target flags) for text or JSON")
	}
	theme, err := pickTheme(vf.theme)
	if err != nil {
		return err
	}
	lipgloss.SetColorProfile(colorProfile(termenv.NewOutput(os.Stdout), os.Getenv, true))
	logger, closeLog, err := openLog(vf.logFile)
	if err != nil {
		return err
	}
	defer closeLog()

	client, err := scrape.NewClient(config.HTTPClientConfig{}, scrape.Options{Timeout: vf.timeout})
	if err != nil {
		return err
	}
	var rec *recorder
	if vf.record != "" {
		if rec, err = createRecording(vf.record, vf.interval); err != nil {
			return fmt.Errorf("--record: %v", err)
		}
		defer func() {
			if err := rec.close(); err != nil {
				logger.Error("recording failed", "error", err.Error())
				fmt.Fprintln(os.Stderr, "pdtop:", err)
				return
			}
			fmt.Fprintf(os.Stderr, "pdtop: recorded to %s: %s\n", vf.record, rec.summary())
		}()
	}
	scraper := collect.New(client, collect.Options{Timeout: vf.timeout, Tap: rec.tap()})
	st := store.New(store.Options{Interval: vf.interval})
	now := time.Now()
	st.SetTargets(now, targets)
	rec.targets(now, st.Targets())
	logger.Info("pdtop started", "targets", len(targets), "interval", vf.interval, "window", vf.window)

	if follow != nil {
		go follow(func(ts []sources.Target) {
			now := time.Now()
			st.SetTargets(now, ts)
			rec.targets(now, st.Targets())
		})
	}
	var backend sources.Backend = &collect.Live{Store: st, Scraper: scraper, Observe: rec.observe(logFailures(logger))}
	if notice != nil {
		backend = noticeBackend{Backend: backend, notice: notice}
	}
	m := ui.New(ui.Config{
		Backend:  backend,
		Interval: vf.interval,
		Timeout:  vf.timeout,
		Window:   vf.window,
		Styles:   themes.NewStyles(theme),
		Mouse:    vf.mouse,
	})
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithFPS(20)}
	if vf.mouse {
		opts = append(opts, tea.WithMouseCellMotion())
	}
	p := tea.NewProgram(m, opts...)
	_, err = p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

// colorProfile is what the terminal can show, for lipgloss. NO_COLOR
// chooses the mono theme (pickTheme), which has no colours at all, but it
// must not also take away bold, faint and reverse — focus, headers and
// critical values use them — so the profile comes from the terminal, not
// from NO_COLOR as termenv's EnvColorProfile would have it. TERM=dumb gets
// plain text. tmux and screen report TERM=screen*, which termenv takes for
// a terminal without colour although it has the 16 ANSI colours the themes
// use.
func colorProfile(out *termenv.Output, getenv func(string) string, tty bool) termenv.Profile {
	term := getenv("TERM")
	if term == "dumb" {
		return termenv.Ascii
	}
	p := out.ColorProfile()
	if p == termenv.Ascii && tty {
		for _, prefix := range []string{"screen", "tmux", "rxvt", "vt220", "putty", "konsole", "st-"} {
			if strings.HasPrefix(term, prefix) {
				return termenv.ANSI
			}
		}
	}
	return p
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

// noticeBackend adds a footer notice to every snapshot of a backend.
type noticeBackend struct {
	sources.Backend
	notice func() string
}

func (b noticeBackend) Snapshot(window time.Duration) *sources.Snapshot {
	s := b.Backend.Snapshot(window)
	s.Notice = b.notice()
	return s
}

// Detail passes the drill-down's request through: embedding the Backend
// interface would otherwise hide the wrapped backend's optional
// sources.DetailBackend, and the demo's drill-down would lose its history.
// A wrapped backend without it gives nil (the drill-down then draws from
// the snapshot alone).
func (b noticeBackend) Detail(targetID string, at time.Time, window time.Duration) *sources.WorkerDetail {
	if d, ok := b.Backend.(sources.DetailBackend); ok {
		return d.Detail(targetID, at, window)
	}
	return nil
}
