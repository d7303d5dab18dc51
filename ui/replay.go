package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/pdtop/pdtop/sources"
)

// Seek steps of the replay keys.
const (
	seekShort = 10 * time.Second
	seekLong  = time.Minute
)

// ReplayKeyMap holds the playback keys, active only when the backend is
// a recording (sources.Player).
type ReplayKeyMap struct {
	Pause     key.Binding
	Back      key.Binding
	Forward   key.Binding
	BackLong  key.Binding
	FwdLong   key.Binding
	Faster    key.Binding
	Slower    key.Binding
	ToStart   key.Binding
	SeekHints key.Binding // footer hint for ←/→
}

// DefaultReplayKeyMap returns the playback keys.
func DefaultReplayKeyMap() ReplayKeyMap {
	return ReplayKeyMap{
		Pause:     key.NewBinding(key.WithKeys("p", " "), key.WithHelp("p", "pause playback")),
		Back:      key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "back 10s")),
		Forward:   key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "forward 10s")),
		BackLong:  key.NewBinding(key.WithKeys("shift+left", "<"), key.WithHelp("⇧← or <", "back 1m")),
		FwdLong:   key.NewBinding(key.WithKeys("shift+right", ">"), key.WithHelp("⇧→ or >", "forward 1m")),
		Faster:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster (×2)")),
		Slower:    key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower (÷2)")),
		ToStart:   key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "back to the start")),
		SeekHints: key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "seek")),
	}
}

// FullHelp lists the playback keys for the help overlay (p is listed
// with the application's keys).
func (k ReplayKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Back, k.Forward, k.BackLong, k.FwdLong}, {k.Faster, k.Slower, k.ToStart}}
}

// playbackPause is p while replaying: it pauses the recording's clock;
// ok is false when not replaying.
func (m *Model) playbackPause() (key.Binding, bool) {
	p, ok := m.player()
	if !ok {
		return key.Binding{}, false
	}
	if p.Progress().Paused {
		return with(m.replayKeys.Pause, "p", "resume playback"), true
	}
	return with(m.replayKeys.Pause, "p", "pause playback"), true
}

// withoutArrows frees ← and → for seeking: panel focus keeps tab,
// shift+tab, h and l.
func withoutArrows(k KeyMap) KeyMap {
	k.Next = key.NewBinding(key.WithKeys("tab", "l"), key.WithHelp("tab", "next panel"))
	k.Prev = key.NewBinding(key.WithKeys("shift+tab", "h"), key.WithHelp("shift+tab", "previous panel"))
	return k
}

// player returns the backend as a recording player, when it is one.
func (m *Model) player() (sources.Player, bool) {
	p, ok := m.cfg.Backend.(sources.Player)
	return p, ok
}

// replayKey handles a playback key; handled is false for any other key
// (or when not replaying). A seek starts a round at once so the screen
// follows without waiting for the next tick.
func (m *Model) replayKey(msg tea.KeyMsg) (cmd tea.Cmd, handled bool) {
	p, ok := m.player()
	if !ok {
		return nil, false
	}
	k := m.replayKeys
	seek := func(d time.Duration) {
		p.Seek(d)
		cmd = m.round()
	}
	switch {
	case key.Matches(msg, k.Pause):
		p.SetPaused(!p.Progress().Paused)
	case key.Matches(msg, k.BackLong):
		seek(-seekLong)
	case key.Matches(msg, k.FwdLong):
		seek(seekLong)
	case key.Matches(msg, k.Back):
		seek(-seekShort)
	case key.Matches(msg, k.Forward):
		seek(seekShort)
	case key.Matches(msg, k.ToStart):
		pr := p.Progress()
		seek(pr.Start.Sub(pr.Pos))
	case key.Matches(msg, k.Faster):
		p.SetSpeed(p.Progress().Speed * 2)
	case key.Matches(msg, k.Slower):
		p.SetSpeed(p.Progress().Speed / 2)
	default:
		return nil, false
	}
	return cmd, true
}

// replayLines is how many lines the progress line takes (0 when live).
func (m *Model) replayLines() int {
	if _, ok := m.player(); ok && m.height >= minHeight+2 {
		return 1
	}
	return 0
}

// replayMode is the summary's refresh state while replaying: "replay
// 10x", "paused", "end of recording".
func (m *Model) replayMode() string {
	p, ok := m.player()
	if !ok {
		return ""
	}
	pr := p.Progress()
	switch {
	case pr.Ended:
		return "end of recording"
	case pr.Paused:
		return "replay paused"
	}
	return "replay " + speedText(pr.Speed)
}

// progressLine is "▶ demo.pdrec  01:23 / 05:00 ━━━━╸───── 10x  03:01:23
// UTC" with the damage, if any, where the file stops. When it is wider
// than the screen it sheds the bar, the date, the file name and the
// damage's reason, in that order, so what is left is whole.
func (m *Model) progressLine() string {
	p, ok := m.player()
	if !ok {
		return ""
	}
	st := m.cfg.Styles
	pr := p.Progress()
	total := pr.End.Sub(pr.Start)
	at := pr.Pos.Sub(pr.Start)
	state := "▶"
	switch {
	case pr.Ended:
		state = "■"
	case pr.Paused:
		state = "❚❚"
	case pr.Seeking:
		state = "…"
	}
	// Forms, longest first: {file, date, full damage reason}.
	for _, f := range [][3]bool{{true, true, true}, {true, false, true}, {false, false, true}, {false, false, false}} {
		left := fmt.Sprintf("%s %s  %s / %s", state, pr.File, clock(at), clock(total))
		if !f[0] {
			left = fmt.Sprintf("%s %s / %s", state, clock(at), clock(total))
		}
		right := "  " + speedText(pr.Speed) + "  " + pr.Pos.UTC().Format("15:04:05 UTC")
		if f[1] {
			right = "  " + speedText(pr.Speed) + "  " + pr.Pos.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		switch {
		case pr.Damage != "":
			d := pr.Damage
			if !f[2] {
				d, _, _ = strings.Cut(d, " (")
			}
			right += "  " + st.Warn.Render("file "+d+": stops here")
		case pr.Ended:
			right += "  end of recording (0: start over)"
		case pr.Seeking:
			right += "  rebuilding history…"
		}
		room := m.width - ansi.StringWidth(left) - ansi.StringWidth(right)
		if room < 0 {
			continue // does not fit even without the bar
		}
		barW := room - 2
		bar := ""
		if barW >= 8 {
			barW = min(barW, 40)
			filled := 0
			if total > 0 {
				filled = int(float64(barW) * float64(at) / float64(total))
			}
			filled = max(0, min(barW, filled))
			bar = " " + st.Accent.Render(strings.Repeat("━", filled)) + st.Muted.Render(strings.Repeat("─", barW-filled))
		}
		return left + bar + right
	}
	return ansi.Truncate(fmt.Sprintf("%s %s / %s", state, clock(at), clock(total)), m.width-1, "") + "…"
}

// clock formats a duration as m:ss (h:mm:ss past an hour).
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	if d < 0 {
		d = 0
	}
	h, mnt, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, mnt, s)
	}
	return fmt.Sprintf("%d:%02d", mnt, s)
}

func speedText(s float64) string {
	if s == float64(int(s)) {
		return fmt.Sprintf("%dx", int(s))
	}
	return fmt.Sprintf("%.2gx", s)
}
