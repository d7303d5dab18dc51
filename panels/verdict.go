package panels

import (
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// verdictFor returns the hit verdict for the target with this ID, nil
// when the snapshot has none (e.g. a backend without diagnoses).
func verdictFor(s *sources.Snapshot, id string) *sources.HitVerdict {
	for i := range s.Diagnosis.Hits {
		if v := &s.Diagnosis.Hits[i]; v.ID == id {
			return v
		}
	}
	return nil
}

// causeWords is a cause in two or three words, for a table cell.
func causeWords(c sources.Cause) string {
	switch c.Kind {
	case sources.CauseRestart:
		if strings.HasPrefix(c.Evidence, "joined") {
			return "cold: joined"
		}
		return "cold: restarted"
	case sources.CauseKVPressure:
		return "KV pressure"
	case sources.CauseReplicasDisagree:
		return "replicas disagree"
	case sources.CauseSpilled:
		return "spilled for load"
	case sources.CauseTakesMisses:
		return "takes the misses"
	case sources.CauseNoCacheData:
		return "no cache data"
	case sources.CauseLowTraffic:
		return "low traffic"
	case sources.CauseUnexplained:
		return "unexplained"
	}
	return string(c.Kind)
}

// verdictCell is a worker's verdict in a few words: the likely cause of a
// large gap (warn-toned, with "!"), "ok" within the threshold, or why
// there is no verdict.
func verdictCell(v *sources.HitVerdict, m *marks) cell {
	switch {
	case v == nil:
		return cell{}
	case v.Large && len(v.Causes) > 0 && v.Causes[0].Kind == sources.CauseTakesMisses:
		// Explained by the routing: shown, not alarmed on.
		return muted(causeWords(v.Causes[0]))
	case v.Large && len(v.Causes) > 0:
		m.note("! gap over the threshold; cause below")
		return toned("! "+causeWords(v.Causes[0]), toneWarn)
	case len(v.Causes) > 0:
		return muted(causeWords(v.Causes[0]))
	case v.GapKnown:
		return muted("ok")
	case strings.HasPrefix(v.Verdict, "no data"):
		return muted("no data")
	}
	return muted("no baseline")
}

// workerVerdictCell is verdictCell for a worker's row: a worker whose
// scrapes fail shows its health ("stale", "down"), never a verdict drawn
// from its last figures.
func workerVerdictCell(w *sources.WorkerView, v *sources.HitVerdict, m *marks) cell {
	if w.Health != sources.Up && (v != nil || w.Health != sources.Pending) {
		return toned(w.Health.String(), toneWarn)
	}
	return verdictCell(v, m)
}

// verdictLines are the verdicts worth reading in full: large gaps with
// their causes, then evidence seen before it moves the numbers (replicas
// disagreeing, a restart), one line each.
func verdictLines(s *sources.Snapshot, m *marks) []string {
	var warn, note []string
	for i := range s.Diagnosis.Hits {
		v := &s.Diagnosis.Hits[i]
		switch {
		case v.Large && len(v.Causes) > 0 && v.Causes[0].Kind == sources.CauseTakesMisses:
			note = append(note, clean(v.Name, 30)+": "+v.Verdict)
		case v.Large:
			warn = append(warn, "! "+clean(v.Name, 30)+": "+v.Verdict)
		case v.GapKnown && len(v.Causes) > 0:
			for _, c := range v.Causes {
				if c.Kind == sources.CauseReplicasDisagree || c.Kind == sources.CauseRestart {
					note = append(note, clean(v.Name, 30)+": "+v.Verdict)
					break
				}
			}
		}
	}
	return append(warn, note...)
}

// verdictLines are the drill-down's verdict for its worker: the reading
// in words, what it was compared with, and every cause with its evidence;
// then the worker's stalls.
func (c *detailCtx) verdictLines() []string {
	var lines []string
	if v := verdictFor(c.s, c.w.ID); v != nil {
		t := toneText
		if v.Large {
			t = toneWarn
		}
		lines = append(lines, wrapLines([]string{v.Verdict}, c.iw)...)
		for i := range lines {
			lines[i] = paint(c.st, t, lines[i])
		}
		basis := "compared with " + v.Basis
		if !v.Expected.Present {
			basis = v.Basis // the reason there is no comparison
		}
		for _, l := range wrapLines([]string{basis}, c.iw) {
			lines = append(lines, paint(c.st, toneMuted, l))
		}
		for _, cs := range v.Causes {
			for _, l := range wrapLines([]string{"· " + causeWords(cs) + ": " + cs.Evidence}, c.iw) {
				lines = append(lines, paint(c.st, toneMuted, l))
			}
		}
	}
	for _, st := range c.s.Diagnosis.Stalls {
		if st.ID == c.w.ID {
			for _, l := range wrapLines([]string{"! " + st.Kind + " " + age(st.For) + " — " + st.Detail}, c.iw) {
				lines = append(lines, paint(c.st, toneCrit, l))
			}
		}
	}
	return lines
}
