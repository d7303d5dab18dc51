package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"
	pconfig "github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/config"
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
	vf.registerRecord(fs)
	tf.register(fs)
	pf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprint(fs.Output(), "\nThe dashboard on a real fleet:\n"+
			"  pdtop --gateway URL [--prefill URL … --decode URL …] [--config FILE] [flags]\n"+
			"  pdtop --prometheus URL [--selector '{namespace=\"serving\"}'] [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if pf.set() || usesPrometheus(tf.config) {
		if vf.record != "" {
			return fmt.Errorf("--record keeps raw scrapes, and with --prometheus pdtop scrapes nothing: the server already keeps the history")
		}
		return runPrometheus(context.Background(), fs, pf, vf, tf, stdout)
	}
	if err := pf.validate(); err != nil {
		return err
	}
	f, err := liveFleet(fs, &vf, &tf, true)
	if err != nil {
		return err
	}
	return dashboard(context.Background(), f, vf, stdout)
}

// liveFleet merges the config file (if any) and the flags into a fleet:
// flags given explicitly win over the file, flag targets are added to its
// targets. timing says whether the file's interval, timeout and window
// apply (not for a snapshot, whose --window is how long it scrapes).
// Every error names the flag or the config field.
func liveFleet(fs *flag.FlagSet, vf *viewFlags, tf *targetFlags, timing bool) (*fleet, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	f := &fleet{http: map[string]targetHTTP{}}
	f.disc.Interval, f.disc.MaxTargets = config.DefaultDiscoveryInterval, config.DefaultMaxDiscovered
	if tf.config != "" {
		c, err := loadConfig(tf.config)
		if err != nil {
			return nil, err
		}
		f = fromConfig(c)
		for name, v := range map[string]time.Duration{"interval": c.Interval, "timeout": c.Timeout, "window": c.Window} {
			if v == 0 || set[name] || !timing {
				continue
			}
			switch name {
			case "interval":
				vf.interval = v
			case "timeout":
				vf.timeout = v
			case "window":
				vf.window = v
			}
		}
	}
	if err := vf.validate(); err != nil {
		return nil, err
	}
	if err := tf.addTo(f); err != nil {
		return nil, err
	}
	if !tf.discovery {
		for i := range f.gateways {
			f.gateways[i].discovery = false
		}
	}
	return f, nil
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

// dashboard scrapes the fleet and runs the TUI until the user quits.
func dashboard(ctx context.Context, f *fleet, vf viewFlags, stdout io.Writer) error {
	return runTUI(ctx, vf, stdout, f.secrets, f.snapshotCmd(), f.help, func(ctx context.Context, logger *slog.Logger) (sources.Backend, func(), error) {
		live, start, err := f.backend(vf, logger, nil)
		if err != nil {
			return nil, nil, err
		}
		var backend sources.Backend = live
		cleanup := func() {}
		if vf.record != "" {
			rec, err := createRecording(vf.record, vf.interval)
			if err != nil {
				return nil, nil, fmt.Errorf("--record: %v", err)
			}
			cleanup = func() { rec.closeAndReport(logger) }
			backend = rec.attach(live)
		}
		logger.Info("pdtop started", "targets", len(f.targets), "gateways", len(f.gateways), "interval", vf.interval, "window", vf.window)
		start(ctx)
		if f.notice != nil {
			backend = noticeBackend{Backend: backend, notice: f.notice}
		}
		return backend, cleanup, nil
	})
}

// runTUI checks the terminal, opens the log, builds the backend and runs
// the dashboard on it until the user quits: every mode that shows the
// dashboard (scraping, the demo, the Prometheus backend) goes through it.
// build's cleanup runs once the dashboard has closed.
// snapshotCmd is the command to suggest when stdout is not a terminal;
// help, when set, adds a section to the help overlay.
func runTUI(ctx context.Context, vf viewFlags, stdout io.Writer, secrets []config.Secret,
	snapshotCmd string, help func() (heading, text string),
	build func(context.Context, *slog.Logger) (sources.Backend, func(), error)) error {
	if fh, ok := stdout.(*os.File); !ok || !term.IsTerminal(fh.Fd()) {
		return fmt.Errorf("stdout is not a terminal: pdtop draws a full-screen dashboard; use %s for text or JSON", snapshotCmd)
	}
	theme, err := pickTheme(vf.theme)
	if err != nil {
		return err
	}
	lipgloss.SetColorProfile(colorProfile(termenv.NewOutput(os.Stdout), os.Getenv, true))
	logger, closeLog, err := openLog(vf.logFile, secrets)
	if err != nil {
		return err
	}
	defer closeLog()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	backend, cleanup, err := build(ctx, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	m := ui.New(ui.Config{
		Backend:   backend,
		Interval:  vf.interval,
		Timeout:   vf.timeout,
		Window:    vf.window,
		Styles:    themes.NewStyles(theme),
		Mouse:     vf.mouse,
		Recording: recordingName(vf.record),
		Help:      help,
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

func openLog(path string, secrets []config.Secret) (*slog.Logger, func(), error) {
	if path == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil)), func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--log: %v", err)
	}
	return newLogger(f, secrets), func() { f.Close() }, nil
}

// newLogger writes text log lines to w with every configured secret value
// replaced, whatever attribute it hides in (defence in depth: messages
// are scrubbed where they are made, and secrets print as <secret>).
func newLogger(w io.Writer, secrets []config.Secret) *slog.Logger {
	var vals []string
	for _, s := range secrets {
		if v := s.Reveal(); len(v) >= 4 {
			vals = append(vals, v)
		}
	}
	scrub := func(s string) string {
		for _, v := range vals {
			s = strings.ReplaceAll(s, v, config.Redacted)
		}
		return s
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if len(vals) == 0 {
			return a
		}
		v := a.Value.Resolve()
		switch v.Kind() {
		case slog.KindString:
			return slog.String(a.Key, scrub(v.String()))
		case slog.KindAny:
			return slog.String(a.Key, scrub(fmt.Sprint(v.Any())))
		}
		return a
	}}))
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
		switch {
		case r.Err != nil:
			class = r.Err.Class
		case r.Via != "" && r.DirectErr != nil:
			class = "via " + r.DirectErr.Class
		}
		mu.Lock()
		prev, seen := last[t.ID]
		last[t.ID] = class
		mu.Unlock()
		switch {
		case class == prev:
		case r.Err != nil:
			l.Warn("scrape failed", "target", t.ID, "role", t.Role.String(), "class", string(class), "error", r.Err.Message)
		case r.Via != "" && r.DirectErr != nil:
			l.Warn("scrape failed; reading the worker through its gateway", "target", t.ID, "via", r.Via,
				"class", string(r.DirectErr.Class), "error", r.DirectErr.Message)
		case seen && prev != sources.ErrNone:
			l.Info("scrape recovered", "target", t.ID)
		}
	}
}

// defaultHTTP is the HTTP configuration of targets without their own:
// nothing sent but the request, HTTP/2 allowed, redirects not followed.
func defaultHTTP() pconfig.HTTPClientConfig { return pconfig.HTTPClientConfig{EnableHTTP2: true} }

func dirOf(path string) string { return filepath.Dir(path) }

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

// recordingName is the file --record writes, as the summary line shows it
// ("● REC demo.pdrec"): its base name; "" when not recording.
func recordingName(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}
