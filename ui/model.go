// Package ui is pdtop's bubbletea root model: it schedules scrapes as
// tea.Cmds (one in flight per target, missed ticks skipped rather than
// queued), hands each new Snapshot to the panels, and owns layout, focus,
// zoom, help and pause.
package ui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
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
	// Styles from the chosen theme.
	Styles *themes.Styles
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
	cfg    Config
	keys   KeyMap
	help   help.Model
	panels []panels.Panel
	// targets is the full-screen targets view (key t).
	targets     panels.Panel
	showTargets bool

	width, height int
	focus         int
	zoom          bool
	showHelp      bool
	paused        bool

	gen          int
	inflight     map[string]bool
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
	st := cfg.Styles
	h.Styles.ShortKey, h.Styles.ShortDesc, h.Styles.ShortSeparator = st.HelpKey, st.HelpDesc, st.HelpSep
	h.Styles.FullKey, h.Styles.FullDesc, h.Styles.FullSeparator = st.HelpKey, st.HelpDesc, st.HelpSep
	h.Styles.Ellipsis = st.HelpSep
	m := &Model{
		cfg:      cfg,
		keys:     DefaultKeyMap(),
		help:     h,
		panels:   panels.All(cfg.Styles),
		targets:  panels.NewTargets(cfg.Styles),
		inflight: map[string]bool{},
	}
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
		return m, m.handleKey(msg)
	case tickMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		m.lastTick = m.now()
		return m, tea.Batch(m.round(), m.build(), m.tick())
	case jobDoneMsg:
		delete(m.inflight, msg.key)
		if len(m.inflight) == 0 {
			return m, m.build()
		}
		return m, nil
	case snapMsg:
		m.building = false
		m.latest = msg.snap
		if !m.paused {
			m.show(msg.snap)
		}
		if m.buildPending {
			m.buildPending = false
			return m, m.build()
		}
		return m, nil
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
	for _, j := range b.Round() {
		if m.inflight[j.Key] {
			b.Busy(j.Key)
			continue
		}
		m.inflight[j.Key] = true
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

func (m *Model) show(s *sources.Snapshot) {
	m.shown = s
	for _, p := range m.panels {
		p.SetSnapshot(s)
	}
	m.targets.SetSnapshot(s)
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
