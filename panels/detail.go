package panels

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// Detail is the drill-down view of one worker: every canonical signal it
// exposes with the raw metric name it came from and a sparkline of its
// history, its actual prefix hit against each gateway replica's
// prediction over time, each replica's view of it (in-flight, picks,
// health, circuit), its restarts with times and reasons, and its scrape
// health. It draws from the Snapshot and, when the backend offers one, a
// sources.WorkerDetail with the full per-signal history.
type Detail struct {
	st     *themes.Styles
	keys   KeyMap
	w, h   int
	id     string
	snap   *sources.Snapshot
	detail *sources.WorkerDetail

	offset, maxOff, page int
	cached               string
	valid                bool
}

// NewDetail returns an empty drill-down drawing with st.
func NewDetail(st *themes.Styles) *Detail {
	if st == nil {
		st = themes.Default()
	}
	return &Detail{st: st, keys: DefaultKeyMap(), page: 1}
}

// SetTarget chooses the worker (by target ID); a new worker starts at the
// top and drops the previous worker's history.
func (d *Detail) SetTarget(id string) {
	if id != d.id {
		d.id, d.offset, d.detail, d.valid = id, 0, nil, false
	}
}

// Target is the worker shown.
func (d *Detail) Target() string { return d.id }

// SetSnapshot hands the view new data.
func (d *Detail) SetSnapshot(s *sources.Snapshot) { d.snap, d.valid = s, false }

// SetDetail hands the view the backend's history of the worker; one for
// another target is ignored.
func (d *Detail) SetDetail(wd *sources.WorkerDetail) {
	if wd == nil || wd.TargetID == d.id {
		d.detail, d.valid = wd, false
	}
}

// SetSize sets the outer size, frame included.
func (d *Detail) SetSize(w, h int) {
	w, h = max(w, 0), max(h, 0)
	if w != d.w || h != d.h {
		d.w, d.h, d.valid = w, h, false
	}
}

// SetStyles switches the theme.
func (d *Detail) SetStyles(st *themes.Styles) {
	if st != nil {
		d.st, d.valid = st, false
	}
}

// KeyMap is the scroll keys (the view has no cursor or sort).
func (d *Detail) KeyMap() help.KeyMap {
	k := d.keys.forState(false, d.maxOff > 0, false, false)
	return scrollKeys{k}
}

// scrollKeys lists only the movement keys of a KeyMap.
type scrollKeys struct{ k KeyMap }

func (s scrollKeys) ShortHelp() []key.Binding { return []key.Binding{s.k.Up, s.k.Down} }
func (s scrollKeys) FullHelp() [][]key.Binding {
	if !s.k.Up.Enabled() {
		return nil
	}
	return [][]key.Binding{{s.k.Up, s.k.Down, s.k.PageUp, s.k.PageDown}, {s.k.Home, s.k.End}}
}

// Update scrolls on the movement keys and the mouse wheel.
func (d *Detail) Update(msg tea.Msg) (*Detail, tea.Cmd) {
	off := d.offset
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, d.keys.Up):
			off--
		case key.Matches(msg, d.keys.Down):
			off++
		case key.Matches(msg, d.keys.PageUp):
			off -= d.page
		case key.Matches(msg, d.keys.PageDown):
			off += d.page
		case key.Matches(msg, d.keys.Home):
			off = 0
		case key.Matches(msg, d.keys.End):
			off = d.maxOff
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			off -= 3
		case tea.MouseButtonWheelDown:
			off += 3
		}
	}
	off = clamp(off, 0, d.maxOff)
	if off != d.offset {
		d.offset, d.valid = off, false
	}
	return d, nil
}

// View returns exactly the set size.
func (d *Detail) View() string {
	if !d.valid {
		d.cached = d.render()
		d.valid = true
	}
	return d.cached
}

func (d *Detail) render() (out string) {
	w, h := d.w, d.h
	if h <= 0 {
		return ""
	}
	if w < 30 || h < 5 {
		return strings.Join(block([]string{paint(d.st, toneMuted, "too small")}, w, h), "\n")
	}
	defer func() {
		if r := recover(); r != nil {
			body := []string{paint(d.st, toneCrit, "render error: "+clean(fmt.Sprint(r), 200))}
			out = strings.Join(frame(d.st, "Worker", true, w, h, body, ""), "\n")
		}
	}()
	iw, ih := w-2, h-2
	wv := d.worker()
	title := "Worker " + clean(d.id, 60)
	var lines []string
	switch {
	case d.snap == nil:
		lines = []string{paint(d.st, toneMuted, "waiting for first scrape…")}
	case wv == nil:
		lines = []string{paint(d.st, toneWarn, "this worker is no longer in the target list"), "",
			paint(d.st, toneMuted, "esc goes back")}
	default:
		title = "Worker " + clean(wv.Name, 40) + " · " + wv.Role.String() + " · esc back"
		lines = detailLines(&detailCtx{st: d.st, s: d.snap, w: wv, d: d.detail, iw: iw})
	}
	d.maxOff = max(0, len(lines)-ih)
	d.offset = clamp(d.offset, 0, d.maxOff)
	d.page = max(1, ih-1)
	end := min(len(lines), d.offset+ih)
	note := scrollNote(d.offset, len(lines)-end)
	return strings.Join(frame(d.st, title, true, w, h, lines[d.offset:end], note), "\n")
}

// worker is the shown worker in the current snapshot.
func (d *Detail) worker() *sources.WorkerView {
	if d.snap == nil {
		return nil
	}
	for i := range d.snap.Workers {
		if d.snap.Workers[i].ID == d.id {
			return &d.snap.Workers[i]
		}
	}
	return nil
}
