// Package ui is pdtop's bubbletea root model: it schedules scrapes as
// tea.Cmds (one in flight per target, missed ticks skipped rather than
// queued), hands each new Snapshot to the panels, and owns layout, focus,
// zoom, help, pause, the time window, the worker filter, the drill-down,
// the theme and the mouse.
package ui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/panels"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// Config is everything the root model needs; cmd/ builds it.
type Config struct {
	// Backend supplies the data: direct scraping, a replay or PromQL.
	Backend sources.Backend
	// Interval between refresh rounds (default 1s).
	Interval time.Duration
	// Timeout for one job of a round (default Interval, so a slow target
	// skips ticks instead of piling up).
	Timeout time.Duration
	// Window for rates and quantiles (default 1m).
	Window time.Duration
	// Styles from the chosen theme; T cycles through themes.Names().
	Styles *themes.Styles
	// Windows are the steps of the [ and ] keys (default 1m, 5m, 15m; the
	// configured Window is added when it is not one of them).
	Windows []time.Duration
	// Mouse says the program receives mouse events (--mouse): click
	// focuses a panel or tab, the wheel scrolls.
	Mouse bool
	// Recording, when set, is the file every scrape is being recorded to
	// (--record): the summary line starts with "● REC file".
	Recording string
	// Help is extra text for the help overlay, under its own heading
	// (the demo's scenario: what it should show).
	Help func() (heading, text string)
}

// tickMsg starts a scrape round; gen drops ticks of an older schedule.
type tickMsg struct{ gen int }

// jobDoneMsg says one job of a round finished (its result is already in
// the backend).
type jobDoneMsg struct{ key string }

// snapMsg carries a freshly derived snapshot.
type snapMsg struct{ snap *sources.Snapshot }

// Model is the root bubbletea model.
type Model struct {
	cfg        Config
	keys       KeyMap
	replayKeys ReplayKeyMap
	help       help.Model
	panels     []panels.Panel

	width, height int
	focus         int
	zoom          bool
	showHelp      bool
	helpOff       int // help overlay scroll offset (lines)
	helpMax       int // largest useful offset, from the last draw
	helpScroll    panels.KeyMap
	showCapacity  bool
	paused        bool

	// The worker filter (/): applied to every panel's worker list.
	filter    panels.Filter
	input     textinput.Model
	editing   bool
	filterErr string

	// The drill-down (enter): one worker's detail view.
	drill         *panels.Detail
	drilling      bool
	detailBusy    bool
	detailPending bool

	// The targets view (t): every target's scrape health, full screen.
	targets     panels.Panel
	showTargets bool

	// note is a one-off message in the footer, until the next key.
	note string

	gen          int
	inflight     map[string]bool
	roundJobs    map[string]bool // jobs of the latest round still running
	building     bool
	buildPending bool
	latest       *sources.Snapshot
	shown        *sources.Snapshot
	lastTick     time.Time
}

// New returns the root model.
func New(cfg Config) *Model {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = cfg.Interval
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	if cfg.Styles == nil {
		cfg.Styles = themes.NewStyles(themes.Dark())
	}
	h := help.New()
	cfg.Windows = windowSteps(cfg.Windows, cfg.Window)
	m := &Model{
		cfg:        cfg,
		keys:       DefaultKeyMap(),
		replayKeys: DefaultReplayKeyMap(),
		helpScroll: panels.DefaultKeyMap(),
		help:       h,
		panels:     panels.All(cfg.Styles),
		inflight:   map[string]bool{},
		input:      newFilterInput(),
		drill:      panels.NewDetail(cfg.Styles),
		targets:    panels.NewTargets(cfg.Styles),
	}
	if _, ok := m.player(); ok {
		m.keys = withoutArrows(m.keys)
	}
	m.setStyles(cfg.Styles)
	m.applyFocus()
	return m
}

// Init starts the first scrape round and the tick.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.round(), m.tick())
}

// Update routes messages: sizes to the layout, keys to the app then the
// focused panel, scrape results to the snapshot builder.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.KeyMsg:
		m.note = ""
		return m, m.keyBurst(msg)
	case tea.MouseMsg:
		return m, m.handleMouse(msg)
	case detailMsg:
		return m, m.detailArrived(msg)
	case tickMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		m.lastTick = m.now()
		// One snapshot per round, when its jobs are done, so the screen
		// changes once a tick. If the last round has not finished (a slow
		// target), derive now anyway so the view keeps moving.
		late := len(m.roundJobs) > 0
		cmds := []tea.Cmd{m.round(), m.tick()}
		if late || len(m.roundJobs) == 0 {
			cmds = append(cmds, m.build())
		}
		return m, tea.Batch(cmds...)
	case jobDoneMsg:
		delete(m.inflight, msg.key)
		if m.roundJobs[msg.key] {
			delete(m.roundJobs, msg.key)
			if len(m.roundJobs) == 0 {
				return m, m.build()
			}
		}
		return m, nil
	case snapMsg:
		m.building = false
		m.latest = msg.snap
		var cmds []tea.Cmd
		if !m.paused {
			cmds = append(cmds, m.show(msg.snap))
		}
		if m.buildPending {
			m.buildPending = false
			cmds = append(cmds, m.build())
		}
		return m, tea.Batch(cmds...)
	}
	return m, m.updateFocused(msg)
}

func (m *Model) tick() tea.Cmd {
	gen := m.gen
	return tea.Tick(m.cfg.Interval, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// now is the backend's clock (wall time, or a replay's time).
func (m *Model) now() time.Time {
	if m.cfg.Backend == nil {
		return time.Time{}
	}
	return m.cfg.Backend.Now()
}

// round starts the jobs of one refresh round; a job still running from the
// previous round is skipped for this one (reported to the backend as
// busy), never queued.
func (m *Model) round() tea.Cmd {
	b := m.cfg.Backend
	if b == nil {
		return nil
	}
	timeout := m.cfg.Timeout
	var cmds []tea.Cmd
	m.roundJobs = map[string]bool{}
	for _, j := range b.Round() {
		if m.inflight[j.Key] {
			b.Busy(j.Key)
			continue
		}
		m.inflight[j.Key] = true
		m.roundJobs[j.Key] = true
		j := j
		cmds = append(cmds, func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			j.Run(ctx)
			return jobDoneMsg{key: j.Key}
		})
	}
	return tea.Batch(cmds...)
}

// build derives a snapshot off the UI goroutine; at most one at a time.
func (m *Model) build() tea.Cmd {
	if m.building {
		m.buildPending = true
		return nil
	}
	b := m.cfg.Backend
	if b == nil {
		return nil
	}
	m.building = true
	window := m.cfg.Window
	return func() tea.Msg { return snapMsg{snap: b.Snapshot(window)} }
}

// show puts s on screen and, in the drill-down, asks for the worker's
// detail at the same time.
func (m *Model) show(s *sources.Snapshot) tea.Cmd {
	m.shown = s
	for _, p := range m.panels {
		p.SetSnapshot(s)
	}
	m.drill.SetSnapshot(s)
	m.targets.SetSnapshot(s)
	if m.drilling {
		return m.fetchDetail()
	}
	return nil
}

func (m *Model) updateFocused(msg tea.Msg) tea.Cmd {
	if m.showTargets {
		p, cmd := m.targets.Update(msg)
		m.targets = p
		return cmd
	}
	if len(m.panels) == 0 {
		return nil
	}
	p, cmd := m.panels[m.focus].Update(msg)
	m.panels[m.focus] = p
	return cmd
}

func (m *Model) applyFocus() {
	for i, p := range m.panels {
		p.SetFocused(i == m.focus)
	}
}

// clamp bounds v to [lo, hi] (lo wins when hi < lo).
func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}
