package panels

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// CapacityTitle is the capacity view's frame title.
const CapacityTitle = "Capacity in units of work"

// CapacityView draws the capacity view in exactly w×h cells (frame
// included): each pool's offered work against its measured sustained
// rate — prefill in uncached prompt tokens/s, decode in output tokens/s,
// KV transfer in bytes/s, kept as separate accounts so a good hit rate
// cannot hide a decode or network bottleneck — with utilisation,
// headroom and the workers needed at the target utilisation; then how
// each rate was measured, offered → admitted → completed → goodput,
// cold starts against the steady state, stalls, and every finding at
// warning level or above (the summary line names only the first). A panic while
// drawing is shown in the frame.
func CapacityView(s *sources.Snapshot, st *themes.Styles, w, h int) (out string) {
	if st == nil {
		st = themes.Default()
	}
	if w <= 0 || h <= 0 {
		return ""
	}
	defer func() {
		if r := recover(); r != nil {
			out = strings.Join(frame(st, CapacityTitle, true, w, h,
				[]string{paint(st, toneCrit, "render error: "+clean(fmt.Sprint(r), 200))}, ""), "\n")
		}
	}()
	if w < 30 || h < 5 {
		return strings.Join(block([]string{paint(st, toneMuted, "too small (need 30×5)")}, w, h), "\n")
	}
	iw, ih := w-2, h-2
	var body []string
	if s == nil {
		body = make([]string, ih)
		body[(ih-1)/2] = paint(st, toneMuted, center("waiting for first scrape…", iw))
	} else {
		c := &drawCtx{s: s, st: st, w: iw, h: ih}
		body = drawCapacity(c)
	}
	return strings.Join(frame(st, CapacityTitle, true, w, h, body, "c or esc: back"), "\n")
}

func drawCapacity(c *drawCtx) []string {
	s, m := c.s, &c.m
	d := &s.Diagnosis
	cp := &d.Capacity
	if len(s.Workers) == 0 {
		return message(c, emptyFleet(c, "no workers"))
	}
	if !cp.Prefill.Present && !cp.Decode.Present && !cp.Transfer.Present {
		return message(c, "no worker throughput yet: capacity needs prompt and output token counters")
	}
	t := &table{cols: []column{
		{name: "pool", left: true},
		{name: "counts", left: true, prio: 1},
		{name: "offered", unit: "per s"},
		{name: "served", unit: "per s", prio: 4},
		{name: "sustained", unit: "per s"},
		{name: "per worker", unit: "per s", prio: 5},
		{name: "util", unit: "offered÷sus"},
		{name: "headroom", unit: "per s", prio: 3},
		{name: "workers", unit: "up", prio: 2},
		{name: "need", unit: "@" + pct(cp.TargetUtil)},
	}}
	for _, p := range []*sources.PoolLoad{&cp.Prefill, &cp.Decode} {
		if p.Present {
			t.rows = append(t.rows, poolRow(p, cp.TargetUtil, m))
		}
	}
	if p := &cp.Prefill; p.Present && p.OfferedTotal.Present {
		t.rows = append(t.rows, []cell{muted("  all prompt"), muted("tok/s"), m.reading(p.OfferedTotal, num),
			m.reading(s.Fleet.InputRate, num), {}, {}, muted(hitWord(s)), {}, {}, {}})
	}
	for _, l := range cp.Transfer.Links {
		t.rows = append(t.rows, linkRow(l, m))
	}
	m.note("sustained = measured rate while saturated · ≥ never saturated: at least this")
	parts := []part{fixedTablePart(c, t, 0)}
	parts = append(parts, alertPart(c, stallLines(s, "transfer stall", "decode collapse"), 0))
	if fs := FindingLines(s); len(fs) > 0 {
		// Every finding: the summary line names only the first.
		p := alertPart(c, append([]string{"Findings (" + strconv.Itoa(len(fs)) + "):"}, fs...), 1)
		p.min = min(len(fs)+1, 4)
		parts = append(parts, p)
	}
	parts = append(parts, linesPart(muteAll(c, wrapLines(methodLines(cp), c.w)), 1, 3, true))
	parts = append(parts, linesPart(wrapLines(admissionLines(s), c.w), 2, 1, true))
	if cs := coldLines(cp); len(cs) > 0 {
		parts = append(parts, linesPart(wrapLines(cs, c.w), 1, 2, true))
	}
	return stack(c.w, c.h, append(parts, legendPart(c, 4)))
}

// poolRow is one pool's account.
func poolRow(p *sources.PoolLoad, target float64, m *marks) []cell {
	lb := ""
	if p.LowerBound {
		lb = "≥"
	}
	sus := m.reading(p.Capacity, num)
	per := m.reading(p.PerWorker, num)
	if p.Capacity.Present {
		sus.text = lb + sus.text
		per.text = lb + per.text
	}
	util := m.reading(p.Utilisation, pct)
	if u := p.Utilisation; u.Present {
		if p.LowerBound {
			util.text = "≤" + util.text
		}
		switch {
		case u.Value >= 1 && !p.LowerBound:
			util.tone = toneCrit
			util.text += "!"
			m.note("! over capacity: offered more than the pool sustains")
		case u.Value >= target:
			util.tone = toneWarn
		}
	}
	head := m.reading(p.Headroom, num)
	switch h := p.Headroom; {
	case h.Present && h.Value < 0:
		// Never a bare negative: say by how much the pool is over (at
		// most that much when the capacity is only a lower bound).
		head.text = "over " + num(-h.Value)
		if p.LowerBound {
			head.text = "over ≤" + num(-h.Value)
		} else {
			head.tone = toneCrit
		}
		m.note("over X: offered exceeds sustained by X")
	case h.Present && p.LowerBound:
		head.text = "≥" + head.text
	}
	need := cell{}
	if p.WorkersNeeded > 0 {
		need = txt(strconv.Itoa(p.WorkersNeeded))
		if p.LowerBound {
			need.text = "≤" + need.text
		}
		if p.WorkersNeeded > p.Workers {
			need.tone = toneWarn
		}
	}
	name := p.Role.String()
	if p.Role == sources.RoleDecode && p.ITL.Present && sources.Finite(p.ITL.P50) {
		name += " @ITL " + secs(p.ITL.P50)
	}
	return []cell{toned(name, toneAccent), muted(p.Unit), m.reading(p.Offered, num), m.reading(p.Served, num),
		sus, per, util, head, txt(strconv.Itoa(p.Workers)), need}
}

// linkRow is one prefill worker's KV-transfer account (bytes/s). Util is
// the share of time a transfer is in flight, capped at 100%: when
// transfers overlap the row says so instead of a share above 100%, and
// the findings give how many are in flight.
func linkRow(l sources.LinkLoad, m *marks) []cell {
	busy := m.reading(l.Busy, pct)
	head := cell{}
	if l.Headroom.Present {
		head = txt(bytesRate(l.Headroom.Value))
	}
	switch {
	case l.Queued:
		busy.text = "100%!"
		busy.tone = toneCrit
		head = toned("none", toneCrit)
		if l.InFlight.Present {
			busy.text = "100%! ×" + num(l.InFlight.Value)
		}
		m.note("! KV transfers queue: util capped at 100%, ×N in flight on average")
	case l.Busy.Present && l.Busy.Value >= 0.5:
		busy.tone = toneWarn
	}
	return []cell{txt("  KV " + clean(l.Name, 20)), muted("bytes/s"), rateBytesCell(l.Rate, m), {}, rateBytesCell(l.Bandwidth, m), {}, busy, head, {}, {}}
}

func rateBytesCell(r sources.Reading, m *marks) cell {
	if !r.Present || !sources.Finite(r.Value) {
		return m.missing(r.Source)
	}
	return txt(bytesRate(r.Value))
}

// bytesRate is "2.1GB", "340MB" (per second in the column's unit).
func bytesRate(v float64) string {
	switch a := v; {
	case a >= 1e9 || a <= -1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + "GB"
	case a >= 1e6 || a <= -1e6:
		return strconv.FormatFloat(v/1e6, 'f', 0, 64) + "MB"
	}
	return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "kB"
}

// hitWord is the fleet hit that separates all prompt tokens from the
// uncached ones: "hit 61%".
func hitWord(s *sources.Snapshot) string {
	if h := s.Fleet.Hit; h.Present && h.Total > 0 {
		return "hit " + pct(h.Ratio)
	}
	return ""
}

// methodLines say how each figure was measured.
func methodLines(cp *sources.Capacity) []string {
	var out []string
	for _, p := range []*sources.PoolLoad{&cp.Prefill, &cp.Decode} {
		if !p.Present {
			continue
		}
		l := p.Role.String() + ": offered = " + p.Offered.Source
		if p.Note != "" {
			l = p.Role.String() + ": " + p.Note
		}
		if p.Method != "" {
			l += "; sustained = " + p.Method
		}
		out = append(out, l)
	}
	if cp.Transfer.Present {
		out = append(out, "KV: bytes/s = Δ size histogram sum; sustained = one transfer's speed, Σ bytes ÷ Σ transfer time (queueing included); "+
			"util = bytes/s ÷ that = share of time a transfer is in flight, up to 100%: beyond, transfers overlap (×N in flight on average)")
	}
	return out
}

// admissionLines are offered → admitted → completed → goodput, with
// rejections by reason.
func admissionLines(s *sources.Snapshot) []string {
	a := &s.Diagnosis.Admission
	if !a.Present {
		l := "no gateway scraped: offered, admitted and rejected requests are unknown"
		if a.Completed.Present {
			l += "; workers finished " + num(a.Completed.Value) + " req/s"
		}
		out := []string{l}
		if g := goodputLine(s); g != "" {
			out = append(out, g)
		}
		return out
	}
	r := func(x sources.Reading) string { return readingText(x, rate) }
	flow := "requests/s: offered " + r(a.Offered) + " → admitted " + r(a.Admitted) + " → completed " + r(a.Completed)
	var rej []string
	for _, k := range []string{"429", "408", "5xx", "no workers"} {
		if x, ok := a.Rejected[k]; ok && x.Present {
			rej = append(rej, k+" "+rate(x.Value))
		}
	}
	flow += " · rejected " + readingText(a.RejectedShare, pct)
	if len(rej) > 0 {
		flow += " (" + strings.Join(rej, ", ") + ")"
	}
	if a.Retried.Present {
		flow += " · retried " + rate(a.Retried.Value) + "/s"
	}
	out := []string{flow}
	if g := a.Goodput; g.Present {
		l := "goodput " + goodputShare(g)
		if g.Rate.Present {
			l += " = " + rangeNum(g.Rate) + " req/s"
		}
		var each []string
		if g.TTFT.Present {
			each = append(each, "TTFT met by "+rangePct(g.TTFT))
		}
		if g.ITL.Present {
			each = append(each, "ITL by "+rangePct(g.ITL)+" of tokens")
		}
		if len(each) > 0 {
			l += " (" + strings.Join(each, ", ") + "; ranges are the histogram buckets' bounds)"
		}
		out = append(out, l)
	}
	return out
}

// coldLines are the cold starts and bursts, one line each: "cold start: "
// only where the cache started cold (a restart, a join, a burst whose hit
// fell); a burst whose hit held is just a burst, with what else explains
// its TTFT.
func coldLines(cp *sources.Capacity) []string {
	var out []string
	for _, c := range cp.ColdStarts {
		if c.Cold {
			out = append(out, "cold start: "+c.Text)
		} else {
			out = append(out, c.Text)
		}
	}
	return out
}

func muteAll(c *drawCtx, lines []string) []string {
	for i, l := range lines {
		lines[i] = paint(c.st, toneMuted, l)
	}
	return lines
}

// PrintCapacity is the capacity view for a ticket (pdtop snapshot): the
// same content in a w-wide frame exactly as tall as it needs.
func PrintCapacity(s *sources.Snapshot, st *themes.Styles, w int) string {
	if s == nil || w < 30 {
		return ""
	}
	if st == nil {
		st = themes.Default()
	}
	body := drawCapacity(&drawCtx{s: s, st: st, w: w - 2, h: 400, print: true})
	for len(body) > 0 && strings.TrimSpace(stripANSI(body[len(body)-1])) == "" {
		body = body[:len(body)-1]
	}
	return strings.Join(frame(st, CapacityTitle, false, w, len(body)+2, body, ""), "\n")
}
