// Package panels draws pdtop's six panels and the fleet summary line from a
// *sources.Snapshot. Panels are pure: data + size + theme → string. They do
// no I/O, read no clock (time comes from the Snapshot) and start no
// goroutines; every View is exactly width×height cells at any size ≥ 0,
// and a panic while drawing is recovered and shown inside the panel.
package panels

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// ID identifies one of the six panels; the values are also their order in
// the grid and the number keys that jump to them (ID+1).
type ID int

// The six panels, in display order.
const (
	PrefillQueue ID = iota
	Cache
	KVTransfer
	DecodeAdmission
	TokenCadence
	RestartsRetries
	NumPanels
)

// String returns the panel's title.
func (id ID) String() string {
	if id >= 0 && id < NumPanels {
		return specs[id].title
	}
	if id == TargetsView {
		return targetsSpec.title
	}
	return "panel " + strconv.Itoa(int(id))
}

// Panel is one dashboard panel: a small bubbletea-style component that the
// ui sizes, focuses, feeds snapshots to and asks for its view.
type Panel interface {
	// ID is which panel this is.
	ID() ID
	// Title is the panel's name as shown in its frame and the tab bar.
	Title() string
	// SetSize sets the outer size in cells, frame included.
	SetSize(width, height int)
	// SetFocused marks the panel focused (thick frame and ▶ marker).
	SetFocused(bool)
	// SetSnapshot hands the panel new data; nil means no scrape has
	// finished yet.
	SetSnapshot(*sources.Snapshot)
	// Update handles panel-local keys (scrolling its worker list).
	Update(tea.Msg) (Panel, tea.Cmd)
	// View returns exactly height lines of exactly width cells.
	View() string
	// KeyMap lists the panel's keys for the help overlay.
	KeyMap() help.KeyMap
}

// drawFunc draws a panel's interior from c.s (never nil) into exactly c.w
// × c.h cells, reporting scroll state in c.
type drawFunc func(c *drawCtx) []string

// spec is what distinguishes one panel from another.
type spec struct {
	title      string
	minW, minH int // outer size below which the panel says it is too small
	draw       drawFunc
}

var specs [NumPanels]spec

func init() {
	specs = [NumPanels]spec{
		PrefillQueue:    {"Prefill queueing", 30, 6, drawPrefill},
		Cache:           {"Cache: router vs worker", 30, 6, drawCache},
		KVTransfer:      {"KV transfer", 30, 6, drawKV},
		DecodeAdmission: {"Decode admission", 30, 6, drawDecode},
		TokenCadence:    {"Token cadence", 30, 5, drawCadence},
		RestartsRetries: {"Restarts & retries", 30, 5, drawRestarts},
	}
}

// drawCtx carries one render's inputs and the scroll state it reports.
type drawCtx struct {
	s      *sources.Snapshot
	st     *themes.Styles
	w, h   int // interior size
	offset int // requested scroll offset (rows)

	above, below int // rows hidden above / below after clamping
	maxOff       int // largest useful offset
	page         int // rows visible in the scrolled list
	m            marks

	nav navIn  // sort, filter and selection to draw with
	out navOut // selectable rows found while drawing

	// print draws for a text snapshot: no charts or trends (a few seconds
	// of history say nothing), every row.
	print bool
}

// panel implements Panel for all six panels.
type panel struct {
	id      ID
	spec    spec
	st      *themes.Styles
	keys    KeyMap
	w, h    int
	focused bool
	snap    *sources.Snapshot

	offset   int  // scroll offset of the worker list
	maxOff   int  // from the last render
	page     int  // rows per page, from the last render
	measured bool // maxOff and page come from a render of a snapshot

	// Navigation: sort column, filter and the selected row.
	sortKey string
	desc    bool
	filter  Filter
	selID   string
	selIdx  int
	last    navOut // rows and sortable columns of the last render

	cached string
	valid  bool
}

// New returns panel id drawing with st (themes.Default() when nil).
func New(id ID, st *themes.Styles) Panel {
	if st == nil {
		st = themes.Default()
	}
	p := &panel{id: id, st: st, keys: DefaultKeyMap(), page: 1}
	if id >= 0 && id < NumPanels {
		p.spec = specs[id]
	} else {
		p.spec = spec{title: id.String(), minW: 1, minH: 1, draw: func(*drawCtx) []string { return nil }}
	}
	return p
}

// All returns the six panels in ID order.
func All(st *themes.Styles) []Panel {
	out := make([]Panel, NumPanels)
	for i := range out {
		out[i] = New(ID(i), st)
	}
	return out
}

// ID returns which panel this is.
func (p *panel) ID() ID { return p.id }

// Title returns the panel's name.
func (p *panel) Title() string { return p.spec.title }

// KeyMap returns the panel's keys as they work now, for the help overlay.
func (p *panel) KeyMap() help.KeyMap {
	return p.keys.forState(p.last.has && len(p.last.ids) > 1, p.maxOff > 0, len(p.last.sortable) > 0, p.sortKey != "")
}

// SetSize sets the outer size (frame included); negatives count as 0.
func (p *panel) SetSize(w, h int) {
	w, h = max(w, 0), max(h, 0)
	if w != p.w || h != p.h {
		p.w, p.h, p.valid = w, h, false
	}
}

// SetFocused switches the thick, ▶-marked frame on or off.
func (p *panel) SetFocused(f bool) {
	if f != p.focused {
		p.focused, p.valid = f, false
	}
}

// SetSnapshot stores s and invalidates the cached view (snapshots are
// immutable, so the view is cached until the next one arrives).
func (p *panel) SetSnapshot(s *sources.Snapshot) {
	p.snap, p.valid = s, false
}

// Update moves the cursor (or scrolls) and sorts on the panel's keys and
// the mouse wheel.
func (p *panel) Update(msg tea.Msg) (Panel, tea.Cmd) {
	if p.last.has && len(p.last.ids) > 0 {
		p.navigate(msg)
		return p, nil
	}
	if k, ok := msg.(tea.KeyMsg); ok && (key.Matches(k, p.keys.Sort) || key.Matches(k, p.keys.Reverse)) {
		p.navigate(msg)
		return p, nil
	}
	off := p.offset
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, p.keys.Up):
			off--
		case key.Matches(msg, p.keys.Down):
			off++
		case key.Matches(msg, p.keys.PageUp):
			off -= max(1, p.page)
		case key.Matches(msg, p.keys.PageDown):
			off += max(1, p.page)
		case key.Matches(msg, p.keys.Home):
			off = 0
		case key.Matches(msg, p.keys.End):
			off = p.maxOff
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			off -= 3
		case tea.MouseButtonWheelDown:
			off += 3
		}
	}
	if p.measured {
		off = clamp(off, 0, p.maxOff)
	} else {
		off = max(off, 0) // not drawn yet: the next render clamps it
	}
	if off != p.offset {
		p.offset, p.valid = off, false
	}
	return p, nil
}

// View returns the cached rendering, drawing it when inputs changed.
func (p *panel) View() string {
	if !p.valid {
		p.cached = p.render()
		p.valid = true
	}
	return p.cached
}

// render draws the panel; a panic inside is recovered into an error view.
func (p *panel) render() (out string) {
	w, h := p.w, p.h
	if h <= 0 {
		return ""
	}
	if w < p.spec.minW || h < p.spec.minH {
		msg := fmt.Sprintf("too small (need %d×%d)", p.spec.minW, p.spec.minH)
		if width(msg) > w {
			msg = fmt.Sprintf("need %d×%d", p.spec.minW, p.spec.minH)
		}
		return strings.Join(block([]string{paint(p.st, toneMuted, msg)}, w, h), "\n")
	}
	defer func() {
		if r := recover(); r != nil {
			out = p.errorView(fmt.Sprint(r))
		}
	}()
	iw, ih := w-2, h-2
	var body []string
	note := ""
	if p.snap == nil {
		body = make([]string, ih)
		body[(ih-1)/2] = paint(p.st, toneMuted, center("waiting for first scrape…", iw))
	} else {
		c := &drawCtx{s: p.snap, st: p.st, w: iw, h: ih, offset: p.offset, nav: navIn{
			sortKey: p.sortKey, desc: p.desc, match: p.filter.matcher(p.snap),
			selID: p.selID, selIdx: p.selIdx, focused: p.focused,
		}}
		body = p.spec.draw(c)
		p.offset, p.maxOff, p.page = clamp(c.offset, 0, c.maxOff), c.maxOff, max(1, c.page)
		p.measured = true
		p.last = c.out
		if c.out.sel >= 0 && c.out.sel < len(c.out.ids) {
			p.selIdx, p.selID = c.out.sel, c.out.ids[c.out.sel]
		}
		note = scrollNote(c.above, c.below)
	}
	return strings.Join(frame(p.st, p.spec.title, p.focused, w, h, body, note), "\n")
}

// errorView shows a recovered panic inside the frame instead of crashing.
func (p *panel) errorView(msg string) string {
	msg = clean(strings.ReplaceAll(msg, "\n", " "), 200)
	body := []string{paint(p.st, toneCrit, "render error: "+msg)}
	return strings.Join(frame(p.st, p.spec.title, p.focused, p.w, p.h, body, ""), "\n")
}

// scrollNote is the bottom-border hint for hidden rows.
func scrollNote(above, below int) string {
	var parts []string
	if above > 0 {
		parts = append(parts, "↑ "+strconv.Itoa(above)+" above")
	}
	if below > 0 {
		parts = append(parts, "↓ "+strconv.Itoa(below)+" more")
	}
	return strings.Join(parts, " · ")
}

// frame draws body (fitted to the interior) inside a border of exactly w×h
// cells with the title in the top edge and note in the bottom edge. The
// focused frame is thick and its title carries ▶, so focus never depends
// on colour.
func frame(st *themes.Styles, title string, focused bool, w, h int, body []string, note string) []string {
	if w < 2 || h < 2 {
		return block(body, w, h)
	}
	b, bs, ts := st.FrameBorder, toneFrame, toneTitle
	if focused {
		b, bs, ts = st.FocusedBorder, toneFocusedFrame, toneFocusedTitle
		title = "▶ " + title
	}
	iw := w - 2
	out := make([]string, 0, h)
	p := painterFor(st)
	out = append(out, edge(p, b.TopLeft, b.Top, b.TopRight, title, ts, bs, iw))
	left, right := p.paint(bs, b.Left), p.paint(bs, b.Right)
	for _, l := range block(body, iw, h-2) {
		out = append(out, left+l+right)
	}
	out = append(out, edge(p, b.BottomLeft, b.Bottom, b.BottomRight, note, bs, bs, iw))
	return out
}

// edge draws a horizontal border of iw inner cells with label set into it
// after one border cell ("╭─ label ──╮"). Border and label are rendered
// separately so their styles never nest.
func edge(p *painter, l, mid, r, label string, ls, bs tone, iw int) string {
	if label == "" || iw < 5 {
		return p.paint(bs, l+strings.Repeat(mid, max(0, iw))+r)
	}
	label = " " + fit(label, min(width(label), iw-3)) + " "
	used := 1 + width(label)
	return p.paint(bs, l+mid) + p.paint(ls, label) + p.paint(bs, strings.Repeat(mid, max(0, iw-used))+r)
}
