package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/replay"
	"github.com/pdtop/pdtop/themes"
	"github.com/pdtop/pdtop/ui"
)

// runReplay is `pdtop replay FILE`: the dashboard on a recording.
func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pdtop replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var vf viewFlags
	// The live dashboard's view flags, minus --timeout (nothing is
	// scraped); --interval is the store's step, the recording's own when
	// not given.
	fs.DurationVar(&vf.interval, "interval", 0, "refresh `interval` of the replayed dashboard and the step its rates are derived at (default 1s and the recording's own step)")
	fs.DurationVar(&vf.window, "window", time.Minute, "`window` for rates, quantiles and hit ratios")
	fs.StringVar(&vf.logFile, "log", "", "write a log of events to this `file`")
	fs.StringVar(&vf.theme, "theme", "", "colour theme: dark, light, high-contrast, mono (default dark; mono when NO_COLOR is set or TERM=dumb)")
	fs.BoolVar(&vf.mouse, "mouse", false, "use the mouse: click focuses a panel or tab, the wheel scrolls (off by default so the terminal's own selection works)")
	speed := fs.Float64("speed", 1, "recorded seconds per wall-clock second (0.1–1000; + and - change it while playing)")
	from := fs.Duration("from", 0, "start this far into the recording")
	paused := fs.Bool("paused", false, "start paused (p plays)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: pdtop replay FILE [flags]

Plays a recording made with 'pdtop record' or --record through the same
pipeline as live scraping. Keys: p pause, ←/→ seek 10s, ⇧←/⇧→ (or < >) 1m,
+/- speed, 0 start over; the rest as in the live dashboard.

`)
		fs.PrintDefaults()
	}
	var file string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		file, args = args[0], args[1:]
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if file == "" {
		fmt.Fprintln(stderr, "pdtop replay: which recording? (pdtop replay FILE)")
		return errUsage
	}
	if *speed < sources.MinSpeed || *speed > sources.MaxSpeed {
		return fmt.Errorf("--speed %v: must be in [%v, %v]", *speed, sources.MinSpeed, sources.MaxSpeed)
	}
	if vf.interval == 0 {
		vf.interval = time.Second
	}
	if err := vf.validate(); err != nil {
		return err
	}
	opts := replay.Options{Speed: *speed, From: *from, Paused: *paused}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "interval" {
			opts.Store.Interval = vf.interval // else the recording's own
		}
	})
	p, err := replay.Open(file, opts)
	if err != nil {
		return err
	}
	defer p.Close()
	if d := p.Damage(); d != "" {
		fmt.Fprintf(stderr, "pdtop: %s: %s; replaying what comes before\n", file, d)
	}
	if f, ok := stdout.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		return fmt.Errorf("stdout is not a terminal: pdtop replay draws a full-screen dashboard")
	}
	theme, err := pickTheme(vf.theme)
	if err != nil {
		return err
	}
	lipgloss.SetColorProfile(colorProfile(termenv.NewOutput(os.Stdout), os.Getenv, true))
	_, closeLog, err := openLog(vf.logFile, nil)
	if err != nil {
		return err
	}
	defer closeLog()
	m := ui.New(ui.Config{Backend: p, Interval: vf.interval, Timeout: vf.timeout, Window: vf.window,
		Styles: themes.NewStyles(theme), Mouse: vf.mouse})
	popts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(context.Background()), tea.WithFPS(20)}
	if vf.mouse {
		popts = append(popts, tea.WithMouseCellMotion())
	}
	prog := tea.NewProgram(m, popts...)
	_, err = prog.Run()
	return err
}
