package themes

import (
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestNamesRoundTrip(t *testing.T) {
	want := []string{"dark", "light", "high-contrast", "mono"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range Names() {
		th, ok := ByName(n)
		if !ok || th.Name != n {
			t.Errorf("ByName(%q) = %q, %v", n, th.Name, ok)
		}
	}
	if th, ok := ByName("solarized"); ok || th.Name != "dark" {
		t.Errorf("unknown name: got %q, %v; want dark, false", th.Name, ok)
	}
	if got := Next("mono"); got != "dark" {
		t.Errorf("Next(mono) = %q, want dark", got)
	}
	if got := Next("dark"); got != "light" {
		t.Errorf("Next(dark) = %q, want light", got)
	}
}

// colours returns every colour field of th.
func colours(th Theme) []lipgloss.TerminalColor {
	c := []lipgloss.TerminalColor{th.Text, th.Muted, th.Accent, th.OK, th.Warn,
		th.Crit, th.Border, th.FocusedBorder, th.Title}
	return append(c, th.Series[:]...)
}

// TestSixteenColours checks every colour is the default foreground or an
// ANSI index 0–15, so themes read the same in 16-colour terminals.
func TestSixteenColours(t *testing.T) {
	for _, n := range Names() {
		th, _ := ByName(n)
		for i, c := range colours(th) {
			switch v := c.(type) {
			case lipgloss.NoColor:
			case lipgloss.Color:
				k, err := strconv.Atoi(string(v))
				if err != nil || k < 0 || k > 15 {
					t.Errorf("%s colour %d = %q: not ANSI 0–15", n, i, v)
				}
			default:
				t.Errorf("%s colour %d has type %T", n, i, c)
			}
		}
	}
}

func TestMonoHasNoColour(t *testing.T) {
	th := Mono()
	if !th.NoColor {
		t.Fatal("mono must set NoColor")
	}
	for i, c := range colours(th) {
		if _, ok := c.(lipgloss.NoColor); !ok {
			t.Errorf("mono colour %d = %v", i, c)
		}
	}
}

// TestRenderedCodes renders every style under a 256-colour profile and
// checks only 16-colour SGR codes appear (and none at all for mono).
func TestRenderedCodes(t *testing.T) {
	old := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(old)
	extended := regexp.MustCompile(`\x1b\[[0-9;]*[34]8;[25];`)
	anyColour := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-7]|9[0-7])(;[0-9;]*)?m`)
	for _, n := range Names() {
		th, _ := ByName(n)
		st := NewStyles(th)
		v := reflect.ValueOf(*st)
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			var styles []lipgloss.Style
			switch x := f.Interface().(type) {
			case lipgloss.Style:
				styles = append(styles, x)
			case [4]lipgloss.Style:
				styles = append(styles, x[:]...)
			default:
				continue
			}
			for _, s := range styles {
				out := s.Render("x")
				if extended.MatchString(out) {
					t.Errorf("%s %s: 256/true colour code in %q", n, v.Type().Field(i).Name, out)
				}
				if th.NoColor && anyColour.MatchString(out) {
					t.Errorf("mono %s: colour code in %q", v.Type().Field(i).Name, out)
				}
			}
		}
	}
}

func TestFocusedBorderDiffersWithoutColour(t *testing.T) {
	for _, n := range Names() {
		th, _ := ByName(n)
		st := NewStyles(th)
		if st.FrameBorder.Top == st.FocusedBorder.Top || st.FrameBorder.Left == st.FocusedBorder.Left {
			t.Errorf("%s: focused border must differ in shape, not only colour", n)
		}
	}
}
