package panels

import (
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/pdtop/pdtop/themes"
)

// tone is the semantic style of a piece of text; it maps to a themes style.
type tone uint8

const (
	toneText tone = iota
	toneMuted
	toneAccent
	toneOK
	toneWarn
	toneCrit
	toneHeader
	toneUnit
	toneSeries0
	toneSeries1
	toneSeries2
	toneSeries3
	toneBarFill
	toneBarEmpty
	toneFrame
	toneFocusedFrame
	toneTitle
	toneFocusedTitle
	toneSummary
	toneSummaryLabel
	toneSelected
	numTones
)

// series is the tone of chart line i.
func series(i int) tone { return toneSeries0 + tone(clamp(i, 0, 3)) }

// styleOf returns the style for t.
func styleOf(st *themes.Styles, t tone) lipgloss.Style {
	switch t {
	case toneMuted:
		return st.Muted
	case toneAccent:
		return st.Accent
	case toneOK:
		return st.OK
	case toneWarn:
		return st.Warn
	case toneCrit:
		return st.Crit
	case toneHeader:
		return st.Header
	case toneUnit:
		return st.Unit
	case toneSeries0, toneSeries1, toneSeries2, toneSeries3:
		return st.Series[t-toneSeries0]
	case toneBarFill:
		return st.BarFill
	case toneBarEmpty:
		return st.BarEmpty
	case toneFrame:
		return st.Frame
	case toneFocusedFrame:
		return st.FocusedFrame
	case toneTitle:
		return st.Title
	case toneFocusedTitle:
		return st.FocusedTitle
	case toneSummary:
		return st.Summary
	case toneSummaryLabel:
		return st.SummaryLabel
	case toneSelected:
		return st.Selected
	}
	return st.Cell
}

// painter wraps single-line text in the escape codes of each tone. It is
// built once per (styles, colour profile) by asking lipgloss to render a
// marker, so output is byte-for-byte what lipgloss would produce for one
// line, at a fraction of Style.Render's cost (which re-measures, pads and
// splits lines on every call).
type painter struct {
	pre, suf [numTones]string
}

func newPainter(st *themes.Styles) *painter {
	p := &painter{}
	for t := tone(0); t < numTones; t++ {
		out := styleOf(st, t).Render("x")
		if i := strings.IndexByte(out, 'x'); i >= 0 {
			p.pre[t], p.suf[t] = out[:i], out[i+1:]
		}
	}
	return p
}

// painterCache is the painter for the last (styles, profile) asked for; the ui
// uses one theme at a time, so one entry is enough.
var painterCache struct {
	sync.Mutex
	st      *themes.Styles
	profile termenv.Profile
	p       *painter
}

// painterFor returns the painter for st under the current colour profile.
func painterFor(st *themes.Styles) *painter {
	prof := lipgloss.ColorProfile()
	painterCache.Lock()
	defer painterCache.Unlock()
	if painterCache.p == nil || painterCache.st != st || painterCache.profile != prof {
		painterCache.st, painterCache.profile, painterCache.p = st, prof, newPainter(st)
	}
	return painterCache.p
}

// paint renders s in tone t; empty text stays empty.
func (p *painter) paint(t tone, s string) string {
	if s == "" || t >= numTones || p.pre[t] == "" && p.suf[t] == "" {
		return s
	}
	return p.pre[t] + s + p.suf[t]
}

// paint renders one line of text s in tone t with st's styles.
func paint(st *themes.Styles, t tone, s string) string {
	return painterFor(st).paint(t, s)
}
