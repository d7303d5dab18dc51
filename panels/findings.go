package panels

import (
	"strconv"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// rejectedText is the rejected share at the gateways, to stand next to
// every latency figure: latencies describe only the requests that were
// admitted. "rejected —" when no gateway answers are counted.
func rejectedText(s *sources.Snapshot) string {
	if r := s.Fleet.Rejected; r.Present && sources.Finite(r.Value) {
		return "rejected " + pct(r.Value)
	}
	return "rejected " + markAbsent
}

// rangePct is "92–95%" (or "94%" when the bounds round alike).
func rangePct(r sources.Range) string {
	lo, hi := pct(r.Lo), pct(r.Hi)
	if lo == hi {
		return lo
	}
	return strings.TrimSuffix(lo, "%") + "–" + hi
}

// goodputText is "goodput 92–95%" of completions meeting the SLO (with
// the bucket to blame when the bounds are wide: goodputShort), or "" when
// the snapshot has no latency histograms.
func goodputText(s *sources.Snapshot) string {
	g := s.Diagnosis.Admission.Goodput
	if !g.Present {
		return ""
	}
	return goodputShort(g)
}

// goodputLine is goodput with its SLO and rate, and the rejected share:
// "goodput 92–95% of completions (TTFT ≤ 2s, ITL ≤ 50ms) · 5.4–5.6 req/s ·
// rejected 1.2%" (wide bounds: goodputShare).
func goodputLine(s *sources.Snapshot) string {
	g := s.Diagnosis.Admission.Goodput
	if !g.Present {
		return ""
	}
	parts := []string{"goodput " + goodputShare(g)}
	if g.Rate.Present {
		parts = append(parts, rangeNum(g.Rate)+" req/s")
	}
	return strings.Join(append(parts, rejectedText(s)), " · ")
}

// rangeNum is "5.4–5.6" (or one figure when they format alike).
func rangeNum(r sources.Range) string {
	lo, hi := num(r.Lo), num(r.Hi)
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// stallLines are the snapshot's stalls of the given kinds, one line each:
// "! decode-0: transfer stall 15s — 3 req waiting; …".
func stallLines(s *sources.Snapshot, kinds ...string) []string {
	var out []string
	for _, st := range s.Diagnosis.Stalls {
		for _, k := range kinds {
			if st.Kind == k {
				out = append(out, "! "+clean(st.Name, 30)+": "+st.Kind+" "+age(st.For)+" — "+st.Detail)
			}
		}
	}
	return out
}

// wrapLines breaks each line at spaces into lines of at most w cells;
// continuation lines are indented by two.
func wrapLines(lines []string, w int) []string {
	if w < 10 {
		return lines
	}
	var out []string
	for _, l := range lines {
		prefix := ""
		for width(l) > w-len(prefix) {
			cut := -1
			for i, r := range l {
				if width(l[:i]) > w-len(prefix) {
					break
				}
				if r == ' ' {
					cut = i
				}
			}
			if cut <= 0 {
				break
			}
			out = append(out, prefix+l[:cut])
			l = strings.TrimLeft(l[cut:], " ")
			prefix = "  "
		}
		out = append(out, prefix+l)
	}
	return out
}

// alertPart draws lines (already worded) in the warning tone, wrapped.
func alertPart(c *drawCtx, lines []string, prio int) part {
	lines = wrapLines(lines, c.w)
	for i, l := range lines {
		lines[i] = paint(c.st, toneWarn, l)
	}
	return linesPart(lines, 1, prio, true)
}

// findingForms is the most severe finding in a few words for the
// summary line — "! decode-0 transfer stall", "! prefill-0 cache gap" —
// with "+N more" for the others at warning level or above, followed by
// more (where the whole list is, e.g. "(c)"); "" when there is none. full
// adds a cache gap's cause ("! prefill-0 cache gap: cold: restarted").
func findingForms(s *sources.Snapshot, more string) (short, full string, t tone) {
	var top []sources.Finding
	for _, f := range s.Diagnosis.Findings {
		if f.Severity >= sources.SevWarn && f.Kind != "rejections" { // the rejected share has its own field
			top = append(top, f)
		}
	}
	if len(top) == 0 {
		return "", "", toneText
	}
	f := top[0]
	txt, cause := "! "+clean(f.Name, 20)+" ", ""
	switch f.Kind {
	case "transfer-stall":
		txt += "transfer stall"
	case "decode-collapse":
		txt += "decode collapse"
	case "cache-gap":
		txt += "cache gap"
		if v := verdictByName(s, f.Name); v != nil && len(v.Causes) > 0 {
			cause = ": " + causeWords(v.Causes[0])
		}
	case "kv-pressure":
		txt += "KV pressure"
	case "replicas-disagree":
		txt += "replicas disagree"
	case "capacity":
		if f.Name == "prefill" || f.Name == "decode" {
			txt += "pool over capacity"
		} else {
			txt += "KV transfers queue"
		}
	default:
		txt = "! " + f.Text
	}
	tail := ""
	if n := len(top) - 1; n > 0 {
		tail = " +" + strconv.Itoa(n) + " more"
		if more != "" {
			tail += " " + more
		}
	}
	t = toneWarn
	if f.Severity >= sources.SevCrit {
		t = toneCrit
	}
	return txt + tail, txt + cause + tail, t
}

// findingSummary is the summary line's finding in its long form.
func findingSummary(s *sources.Snapshot, more string) (string, tone) {
	_, full, t := findingForms(s, more)
	return full, t
}

func verdictByName(s *sources.Snapshot, name string) *sources.HitVerdict {
	for i := range s.Diagnosis.Hits {
		if v := &s.Diagnosis.Hits[i]; v.Name == name && v.Large {
			return v
		}
	}
	return nil
}

// FindingLines are the snapshot's findings at warning level or above,
// most severe first, one sentence each: "! prefill-0: …". The summary
// line names the first; these are all of them.
func FindingLines(s *sources.Snapshot) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, f := range s.Diagnosis.Findings {
		if f.Severity >= sources.SevWarn {
			out = append(out, markOver+" "+clean(f.Text, 400))
		}
	}
	return out
}
