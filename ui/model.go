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
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
)

// ScrapeFunc scrapes one target; it must honour ctx and never panic.
type ScrapeFunc func(ctx context.Context, t sources.Target) sources.ScrapeResult

// Config is everything the root model needs; cmd/ builds it.
type Config struct {
	// Store holds the targets (SetTargets before starting) and their history.
	Store *store.Store
	// Scrape fetches one target.
	Scrape ScrapeFunc
	// Interval between scrape rounds (default 1s).
	Interval time.Duration
	// Timeout for one scrape (default Interval, so a slow target skips
	// ticks instead of piling up).
	Timeout time.Duration
	// Window for rates and quantiles (default 1m).
	Window time.Duration
	// Styles from the chosen theme.
	Styles *themes.Styles
	// Clock stamps snapshots (default time.Now).
	Clock func() time.Time
}

// tickMsg starts a scrape round; gen drops ticks of an older schedule.
type tickMsg struct{ gen int }

// scrapedMsg says one target's scrape finished (the result is already in
// the store).
type scrapedMsg struct{ id string }

// snapMsg carries a freshly derived snapshot.
type snapMsg struct{ snap *sources.Snapshot }

// Model is the root bubbletea model.
type Model struct {
	cfg    Config
	keys   KeyMap
	help   help.Model
	panels []panels.Panel

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
	if cfg.Clock == nil {
		cfg.Clock = time.Now
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
		inflight: map[string]bool{},
	}
	m.applyFocus()
	return m
}

// Init starts the first scrape round and the tick.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.scrapeRound(), m.tick())
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
		m.lastTick = m.cfg.Clock()
		return m, tea.Batch(m.scrapeRound(), m.build(), m.tick())
	case scrapedMsg:
		delete(m.inflight, msg.id)
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

// scrapeRound starts one scrape per target that is not still busy with
// the previous round; busy targets are marked slow for this tick.
func (m *Model) scrapeRound() tea.Cmd {
	st, scrape := m.cfg.Store, m.cfg.Scrape
	if scrape == nil {
		return nil
	}
	spread := m.cfg.Interval / 4
	if spread > 200*time.Millisecond {
		spread = 200 * time.Millisecond
	}
	timeout, clock := m.cfg.Timeout, m.cfg.Clock
	var cmds []tea.Cmd
	for _, t := range st.Targets() {
		if m.inflight[t.ID] {
			st.Ingest(sources.ScrapeResult{TargetID: t.ID, Time: clock(), Skipped: true})
			continue
		}
		m.inflight[t.ID] = true
		t := t
		offset := collect.Offset(t.ID, spread)
		cmds = append(cmds, func() tea.Msg {
			time.Sleep(offset)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			st.Ingest(safeScrape(ctx, scrape, t, clock))
			return scrapedMsg{id: t.ID}
		})
	}
	return tea.Batch(cmds...)
}

// safeScrape turns a panic in the scrape path into a classified error so
// one hostile target can never take the dashboard down.
func safeScrape(ctx context.Context, f ScrapeFunc, t sources.Target, clock func() time.Time) (res sources.ScrapeResult) {
	defer func() {
		if r := recover(); r != nil {
			res = sources.ScrapeResult{TargetID: t.ID, Time: clock(),
				Err: &sources.ScrapeError{Class: sources.ErrOther, Message: "internal error while scraping (recovered)"}}
		}
	}()
	return f(ctx, t)
}

// build derives a snapshot off the UI goroutine; at most one at a time.
func (m *Model) build() tea.Cmd {
	if m.building {
		m.buildPending = true
		return nil
	}
	m.building = true
	st, clock, window := m.cfg.Store, m.cfg.Clock, m.cfg.Window
	return func() tea.Msg { return snapMsg{snap: st.Snapshot(clock(), window)} }
}

func (m *Model) show(s *sources.Snapshot) {
	m.shown = s
	for _, p := range m.panels {
		p.SetSnapshot(s)
	}
}

func (m *Model) updateFocused(msg tea.Msg) tea.Cmd {
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
