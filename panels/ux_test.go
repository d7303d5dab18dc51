package panels

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// TestCutLinesEndInEllipsis gives the cache panel a verdict far longer
// than its room: the wrapped sentence is cut where the panel ends, and
// the last line shown says so with "…" (it used to stop mid-sentence).
func TestCutLinesEndInEllipsis(t *testing.T) {
	lines := []string{"first line of a long sentence", "  that goes on", "  and on"}
	out := stack(40, 2, []part{linesPart(lines, 1, 0, false)})
	if !strings.HasSuffix(out[1], "…") || !strings.Contains(out[1], "that goes on") {
		t.Errorf("a part cut short must end its last line in …: %q", out)
	}
	full := stack(40, 3, []part{linesPart(lines, 1, 0, false)})
	for _, l := range full {
		if strings.Contains(l, "…") {
			t.Errorf("nothing is cut, nothing may say so: %q", full)
		}
	}
	// A line already at full width gives up its last cell.
	wide := []string{strings.Repeat("x", 40), "more"}
	if got := stack(40, 1, []part{linesPart(wide, 1, 0, false)})[0]; width(got) != 40 || !strings.HasSuffix(got, "…") {
		t.Errorf("full-width line cut: %q (%d cells)", got, width(got))
	}
}

// TestSortArrowKeepsColumns sorts every panel by each of its columns and
// checks the header line keeps its length and every other column name
// stays where it was: the arrow takes no room of its own.
func TestSortArrowKeepsColumns(t *testing.T) {
	s := sampleSnapshot()
	checked := 0
	for id := ID(0); id < NumPanels; id++ {
		p := New(id, themes.Default()).(*panel)
		p.SetSize(120, 40)
		p.SetSnapshot(s)
		before := p.View()
		head := headerLine(before)
		if head == "" {
			continue
		}
		for range p.last.sortable {
			p.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'s'}})
			after := p.View()
			got := headerLine(after)
			if !strings.ContainsAny(got, "▼▲") {
				continue // a column not drawn at this width
			}
			checked++
			if !sameWords(got, head) {
				t.Errorf("%v sorted by %q moved the header:\n%s\n%s", id, p.sortKey, head, got)
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d sorted headers checked", checked)
	}
}

// headerLine is the first table header line of a view ("worker …").
func headerLine(v string) string {
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "worker") || strings.Contains(l, "target") {
			return l
		}
	}
	return ""
}

// sameWords reports whether a and b hold the same words at the same
// columns once the arrows are blanked (an arrow in a one-cell gap
// replaces the space there).
func sameWords(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if ra[i] == '▼' || ra[i] == '▲' {
			ra[i] = ' '
		}
	}
	return string(ra) == string(rb)
}

// TestLegendOnlyForColumnsShown: "last batch" is explained only when its
// column is on screen.
func TestLegendOnlyForColumnsShown(t *testing.T) {
	s := sampleSnapshot()
	wide := render(Cache, s, 200, 40)
	if !strings.Contains(wide, "last batch = engine gauge") || !strings.Contains(wide, "batch %") {
		t.Fatalf("200 wide shows the last-batch column and explains it:\n%s", wide)
	}
	narrow := render(Cache, s, 80, 40)
	if strings.Contains(narrow, "batch %") {
		t.Fatalf("fixture: 80 wide should drop the last-batch column:\n%s", narrow)
	}
	if strings.Contains(narrow, "last batch =") {
		t.Errorf("legend explains a column that is not drawn:\n%s", narrow)
	}
}

// TestPoolRowsSayFilterNotApplied: with a filter on, pool rows are still
// the whole pool's, and say so.
func TestPoolRowsSayFilterNotApplied(t *testing.T) {
	s := sampleSnapshot()
	f, err := ParseFilter("prefill-0")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []ID{PrefillQueue, Cache, KVTransfer, DecodeAdmission, TokenCadence} {
		p := New(id, themes.Default())
		p.(Navigator).SetFilter(f)
		p.SetSize(120, 40)
		p.SetSnapshot(s)
		v := p.View()
		if !strings.Contains(v, "pool (all)") || !strings.Contains(v, "(all): pool totals, filter not applied") {
			t.Errorf("%v: filtered pool row not labelled:\n%s", id, v)
		}
		if plain := render(id, s, 120, 40); strings.Contains(plain, "(all)") {
			t.Errorf("%v: no filter, no label:\n%s", id, plain)
		}
	}
}

// TestSummaryWindowSaysWhatItHolds: a window longer than the data says
// how much data it has; one shorter than the charts says how long they
// span; "+N more" names where the rest is; ● REC shows a recording.
func TestSummaryWindowSaysWhatItHolds(t *testing.T) {
	s := sampleSnapshot()
	s.Window = 15 * time.Minute
	s.ChartSpan = 15 * time.Minute
	s.DataSince = s.Time.Add(-90 * time.Second)
	got := Summary(s, themes.Default(), 200, SummaryState{Window: s.Window})
	if !strings.Contains(got, "window 15m (1m30s of data)") {
		t.Errorf("15m window on 90s of data: %q", got)
	}
	s.Window, s.ChartSpan, s.DataSince = time.Minute, 5*time.Minute, s.Time.Add(-time.Hour)
	got = Summary(s, themes.Default(), 200, SummaryState{Window: s.Window})
	if !strings.Contains(got, "window 1m (charts 5m)") {
		t.Errorf("1m window, 5m charts: %q", got)
	}
	// Narrow: the note goes before the window does.
	got = Summary(s, themes.Default(), 60, SummaryState{Window: s.Window})
	if strings.Contains(got, "charts 5m") || width(got) != 60 {
		t.Errorf("60 wide: %q", got)
	}
	got = Summary(s, themes.Default(), 120, SummaryState{Window: s.Window, Recording: "demo.pdrec"})
	if !strings.HasPrefix(strings.TrimSpace(got), "● REC demo.pdrec") {
		t.Errorf("recording not shown first: %q", got)
	}
	if got := Summary(s, themes.Default(), 30, SummaryState{Window: s.Window, Recording: "demo.pdrec"}); !strings.Contains(got, "● REC") {
		t.Errorf("recording must survive a narrow line: %q", got)
	}
}

func TestFindingSummarySaysMore(t *testing.T) {
	s := sampleSnapshot()
	s.Diagnosis.Findings = []sources.Finding{
		{Severity: sources.SevWarn, Kind: "capacity", Name: "prefill-0", Text: "prefill-0: KV transfers overlap — 3.3 in flight on average (they queue behind each other)"},
		{Severity: sources.SevWarn, Kind: "capacity", Name: "prefill-1", Text: "prefill-1: KV transfers overlap — 1.2 in flight on average (they queue behind each other)"},
	}
	txt, _ := findingSummary(s, "(c)")
	if txt != "! prefill-0 KV transfers queue +1 more (c)" {
		t.Errorf("findingSummary = %q", txt)
	}
	if got := FindingLines(s); len(got) != 2 || !strings.Contains(got[1], "prefill-1: KV transfers overlap") {
		t.Errorf("FindingLines = %q", got)
	}
	v := CapacityView(s, themes.Default(), 120, 40)
	if !strings.Contains(v, "Findings (2):") || !strings.Contains(v, "prefill-1: KV transfers overlap — 1.2 in flight") {
		t.Errorf("the capacity view lists every finding:\n%s", v)
	}
}

// TestChartsSayTheirSpan: the time axis names the span ("last 5m"), and
// the cadence panel's figures say they are over the window.
func TestChartsSayTheirSpan(t *testing.T) {
	s := sampleSnapshot()
	s.Window, s.ChartSpan = time.Minute, 5*time.Minute
	v := render(TokenCadence, s, 120, 40)
	for _, want := range []string{"last 1m: ITL p50", "last 5m", "p99 now"} {
		if !strings.Contains(v, want) {
			t.Errorf("missing %q:\n%s", want, v)
		}
	}
}

func TestJoinSomeSaysWhatItLeftOut(t *testing.T) {
	parts := []string{"alpha", "beta", "gamma"}
	if got := joinSome(parts, " · ", 40); got != "alpha · beta · gamma" {
		t.Errorf("all fit: %q", got)
	}
	if got := joinSome(parts, " · ", 16); got != "alpha · beta …" {
		t.Errorf("cut: %q", got)
	}
	if got := joinSome(parts, " · ", 3); width(got) > 3 || !strings.Contains(got, "…") {
		t.Errorf("tiny: %q", got)
	}
}

// TestSummaryKeepsWorkUnitsBeforeACause: on a line too short for all, a
// cache-gap finding gives up its cause before input/output tok/s give up
// their place; on a wide one both are shown.
func TestSummaryKeepsWorkUnitsBeforeACause(t *testing.T) {
	s := sampleSnapshot()
	s.Diagnosis.Findings = []sources.Finding{{Severity: sources.SevWarn, Kind: "cache-gap", Name: "prefill-0",
		Text: "prefill-0: hit 30% since the restart vs 71% on its peers"}}
	if v := verdictByName(s, "prefill-0"); v == nil || len(v.Causes) == 0 {
		t.Fatal("the sample has no flagged verdict for prefill-0")
	}
	// 165 cells hold every field with the short finding, not the long.
	narrow := stripANSI(Summary(s, themes.Default(), 165, SummaryState{Window: s.Window}))
	if !strings.Contains(narrow, "! prefill-0 cache gap │") || !strings.Contains(narrow, " tok/s") {
		t.Errorf("165 wide: %q", narrow)
	}
	wide := stripANSI(Summary(s, themes.Default(), 200, SummaryState{Window: s.Window}))
	if !strings.Contains(wide, "! prefill-0 cache gap: ") || !strings.Contains(wide, " tok/s") {
		t.Errorf("200 wide: %q", wide)
	}
}
