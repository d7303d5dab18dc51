package panels

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

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

// detailCtx is one drill-down render's inputs.
type detailCtx struct {
	st *themes.Styles
	s  *sources.Snapshot
	w  *sources.WorkerView
	d  *sources.WorkerDetail // may be nil
	iw int
	m  marks
}

// detailLines is the whole drill-down, section by section; the view
// scrolls through it.
func detailLines(c *detailCtx) []string {
	var out []string
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, paint(c.st, toneAccent, title))
		out = append(out, lines...)
	}
	section("Target", c.targetLines())
	section("Signals — window "+span(c.s.Window)+", trend over "+span(c.span()), c.signalLines())
	section("Prefix hit: worker actual vs router predicted", c.hitLines())
	section("Gateway replicas' view of this worker", c.routerLines())
	section("Restarts", c.restartLines())
	section("Events", c.eventLines())
	if l := c.m.legendLine(c.st, c.iw); l != "" {
		out = append(out, "", l)
	}
	return out
}

// span is the time the histories cover.
func (c *detailCtx) span() time.Duration {
	if c.d != nil && c.d.Span > 0 {
		return c.d.Span
	}
	return chartSpan(c.s)
}

func (c *detailCtx) targetLines() []string {
	w := c.w
	state := strings.ToUpper(w.Health.String())
	if w.Health == sources.Stale {
		state += " " + since(w.Age)
	}
	st := toneOK
	if w.Health != sources.Up {
		st = toneWarn
	}
	head := paint(c.st, toneText, clean(w.Name, 40)) + "  " + paint(c.st, st, state) + "  " +
		paint(c.st, toneMuted, clean(w.ID, 120))
	lines := []string{head}
	var facts []string
	if eng := w.Generation; eng != "" || w.Engine != "" {
		if !strings.Contains(strings.ToLower(eng), strings.ToLower(w.Engine)) {
			eng = strings.TrimSpace(w.Engine + " " + eng)
		}
		facts = append(facts, "engine "+clean(eng, 60))
	}
	facts = append(facts, "role "+w.Role.String()+" (from "+string(w.Origin)+")")
	if w.Restarts > 0 {
		n := strconv.Itoa(w.Restarts) + " restarts"
		if w.Restarts == 1 {
			n = "1 restart"
		}
		facts = append(facts, markRestart+" "+n+", last "+ago(c.s.Time, w.LastRestart))
	} else {
		facts = append(facts, "no restarts seen")
	}
	lines = append(lines, wrapItems(facts, " · ", c.iw)...)
	scrape := []string{"scrape health: never answered"}
	if !w.LastSuccess.IsZero() {
		scrape[0] = "scrape health: last good " + since(w.Age) + " ago"
	}
	if w.Duration > 0 {
		scrape = append(scrape, "took "+secs(w.Duration.Seconds()))
	}
	if w.BytesWire > 0 || w.BytesBody > 0 {
		scrape = append(scrape, bytesText(w.BytesWire)+" on the wire, "+bytesText(w.BytesBody)+" body")
	}
	if w.Series > 0 {
		scrape = append(scrape, strconv.Itoa(w.Series)+" series kept")
	}
	if w.Skipped == 1 {
		scrape = append(scrape, "1 family skipped (unused)")
	} else if w.Skipped > 0 {
		scrape = append(scrape, strconv.Itoa(w.Skipped)+" families skipped (unused)")
	}
	if w.Dropped > 0 {
		scrape = append(scrape, strconv.Itoa(w.Dropped)+" dropped")
	}
	if w.Problems > 0 {
		scrape = append(scrape, strconv.Itoa(w.Problems)+" parse problems")
	}
	if w.Slow {
		scrape = append(scrape, "SLOW: last tick skipped, previous scrape still running")
	}
	for _, l := range wrapItems(scrape, " · ", c.iw) {
		lines = append(lines, paint(c.st, toneText, l))
	}
	if e := w.LastError; e != nil {
		msg := "last error: " + string(e.Class)
		if e.Status != 0 {
			msg += " " + strconv.Itoa(e.Status)
		}
		msg += " — " + clean(e.Message, 300)
		for _, l := range wrapItems(strings.Fields(msg), " ", c.iw) {
			lines = append(lines, paint(c.st, toneWarn, l))
		}
	}
	return lines
}

// bytesText formats a byte count: "142 KB".
func bytesText(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := num(float64(n))
	return v[:len(v)-1] + " " + strings.ToUpper(v[len(v)-1:]) + "B"
}

// signalLines is the table of every signal the worker exposes.
func (c *detailCtx) signalLines() []string {
	w, m := c.w, &c.m
	th := c.s.Thresholds.WithDefaults()
	trendW := clamp(c.iw/5, 8, 40)
	// Wide: the source metric is a column. Narrow: it goes on a line of
	// its own under each signal, so it is never the part that is cut.
	inline := c.iw >= 110
	t := &table{cols: []column{
		{name: "signal", left: true},
		{name: "value"},
		{name: "unit", left: true},
		{name: "in window", prio: 3},
		{name: "trend", left: true, prio: 1},
		{name: "source metric", left: true, prio: 2, flex: true},
	}}
	if !inline {
		t.cols[5].name = "" // left out: drawn under each row
	}
	var srcs []string
	var sigs []sources.Signal
	for sig := range w.Readings {
		sigs = append(sigs, sig)
	}
	sort.Slice(sigs, func(a, b int) bool { return sigs[a] < sigs[b] })
	for _, sig := range sigs {
		r := w.Readings[sig]
		info := sig.Info()
		unit := info.Unit
		v := m.reading(r, num)
		inc := cell{}
		if info.Kind == sources.Counter {
			unit += "/s"
			if r.Present {
				inc = muted("+" + num(r.Increase))
			}
		}
		if info.Unit == "ratio" && r.Present {
			v, unit = txt(pct(r.Value)).val(r.Value), ""
		}
		switch sig {
		case sources.SigWaiting, sources.SigBootstrapQueue, sources.SigInflightQueue, sources.SigPreallocQueue, sources.SigTransferQueue:
			v = m.queueCell(r, th)
		case sources.SigKVUsage:
			v = m.over(v, r.Value, th.KVUsage, "KV usage ≥ "+pct(th.KVUsage))
		}
		srcs = append(srcs, c.source(sig, r.Source))
		t.rows = append(t.rows, []cell{txt(info.Name), v, muted(unit), inc,
			muted(c.spark(c.history(sig), trendW, 0)), c.srcCell(inline, srcs)})
	}
	var dsigs []sources.Signal
	for sig := range w.Dists {
		dsigs = append(dsigs, sig)
	}
	sort.Slice(dsigs, func(a, b int) bool { return dsigs[a] < dsigs[b] })
	for _, sig := range dsigs {
		q := w.Dists[sig]
		if !q.Present && q.Source == "" {
			continue
		}
		name := sig.Info().Name + " p50/p99"
		v := m.dist(q, p50, latency)
		if q.Present && q.Form == "histogram" && sources.Finite(q.P50) && sources.Finite(q.P99) {
			v = txt(inUnit(q.P50, q.Unit) + " / " + inUnit(q.P99, q.Unit))
			if q.Unit != "s" && q.Unit != "ms" {
				v = txt(num(q.P50) + " / " + num(q.P99))
			}
			switch sig {
			case sources.SigITL:
				v = m.over(v.val(q.P99), q.P99, th.ITLP99, "ITL p99 ≥ "+secs(th.ITLP99))
			case sources.SigTTFT:
				v = m.over(v.val(q.P99), q.P99, th.TTFTP99, "TTFT p99 ≥ "+secs(th.TTFTP99))
			}
		}
		unit := q.Unit
		if unit == "s" || unit == "ms" {
			unit = "" // the values carry it
		}
		if q.Form != "" && q.Form != "histogram" {
			unit += " (" + q.Form + ")"
		}
		cnt := cell{}
		if q.Present {
			cnt = muted(num(q.Count) + " obs")
		}
		var hist []float64
		if c.d != nil {
			hist = c.d.P99[sig]
		}
		srcs = append(srcs, c.source(sig, q.Source))
		t.rows = append(t.rows, []cell{txt(name), v, muted(unit), cnt,
			muted(c.spark(hist, trendW, 0)), c.srcCell(inline, srcs)})
	}
	if len(t.rows) == 0 {
		return []string{paint(c.st, toneMuted, "no signals yet")}
	}
	lines, _, _, _ := t.fitTo(c.iw).render(c.st, c.iw, t.fullHeight(), 0)
	if !inline {
		hl := t.headerLines()
		out := append([]string(nil), lines[:hl]...)
		for i, l := range lines[hl:] {
			out = append(out, l)
			if i < len(srcs) {
				out = append(out, paint(c.st, toneMuted, fit("  ← "+srcs[i], c.iw)))
			}
		}
		lines = out
	}
	if c.d == nil {
		lines = append(lines, paint(c.st, toneMuted, "(this backend keeps history for a few signals only)"))
	} else {
		lines = append(lines, paint(c.st, toneMuted, "trend of latency rows: p99 per step"))
	}
	return lines
}

// srcCell is the source column's cell for the row just added (empty when
// the source goes on its own line).
func (c *detailCtx) srcCell(inline bool, srcs []string) cell {
	if !inline {
		return cell{}
	}
	return muted(srcs[len(srcs)-1])
}

// history is a scalar signal's per-step history: the backend's, else the
// snapshot's (which carries only a few signals).
func (c *detailCtx) history(sig sources.Signal) []float64 {
	if c.d != nil {
		if h, ok := c.d.History[sig]; ok {
			return h
		}
	}
	return c.w.History[sig]
}

// source is the raw metric name behind sig.
func (c *detailCtx) source(sig sources.Signal, src string) string {
	if src == "" && c.d != nil {
		src = c.d.Sources[sig]
	}
	if src == "" {
		return markAbsent
	}
	return clean(src, 120)
}

// spark draws pts in w cells scaled to [0, hi] (hi 0: the largest point).
func (c *detailCtx) spark(pts []float64, w int, hi float64) string {
	if len(pts) == 0 {
		return ""
	}
	if hi == 0 {
		for _, v := range pts {
			if sources.Finite(v) && v > hi {
				hi = v
			}
		}
	}
	return sparkline(pts, len(pts), w, hi)
}

func (c *detailCtx) hitLines() []string {
	w := c.w
	trendW := clamp(c.iw/3, 10, 60)
	var lines []string
	act := "actual    " + hitSummary(w.Hit)
	if w.Hit.Present && w.Hit.Total > 0 {
		act += " (" + num(w.Hit.Hit) + " of " + num(w.Hit.Total) + " " + unitShort(w.Hit.Unit) + ")"
	}
	if w.Hit.Source != "" {
		act += " from " + clean(w.Hit.Source, 80)
	}
	lines = append(lines, fit(act, c.iw))
	hist := w.HitHistory
	if c.d != nil && c.d.HitHistory != nil {
		hist = c.d.HitHistory
	}
	if len(hist) > 0 {
		lines = append(lines, "  "+paint(c.st, toneSeries3, c.spark(hist, trendW, 1))+paint(c.st, toneMuted, "  actual, 0–100%"))
	}
	any := false
	for i := range c.s.Gateways {
		g := &c.s.Gateways[i]
		if !g.Predicted.Present {
			continue
		}
		any = true
		l := "predicted " + hitSummary(g.Predicted) + " by " + clean(g.Name, 30)
		if gap, ok := sources.HitGap(g.Predicted, w.Hit); ok {
			l += ", gap " + pp(gap)
			if gap >= c.s.Thresholds.WithDefaults().HitGap {
				l += markOver
			}
		}
		if g.Predicted.Unit != w.Hit.Unit {
			l += " (" + unitShort(g.Predicted.Unit) + " vs " + unitShort(w.Hit.Unit) + ": different scales)"
		}
		lines = append(lines, fit(l, c.iw))
		if len(g.PredictedHistory) > 0 {
			lines = append(lines, "  "+paint(c.st, toneSeries2, c.spark(g.PredictedHistory, trendW, 1))+
				paint(c.st, toneMuted, "  predicted by "+clean(g.Name, 30)+", 0–100%"))
		}
	}
	if any {
		lines = append(lines, paint(c.st, toneMuted, fit("The prediction is replica-wide: no gateway generation predicts per worker.", c.iw)))
	} else {
		lines = append(lines, paint(c.st, toneMuted, fit("No scraped gateway exposes a predicted hit (smg exposes none).", c.iw)))
	}
	return lines
}

func (c *detailCtx) routerLines() []string {
	w, m := c.w, &c.m
	if len(w.Router) == 0 {
		if len(c.s.Gateways) == 0 {
			return []string{paint(c.st, toneMuted, "no gateway replica scraped")}
		}
		return []string{paint(c.st, toneWarn, "no scraped replica lists this worker")}
	}
	t := &table{cols: []column{
		{name: "replica", left: true, max: 30},
		{name: "in-flight", unit: "req"},
		{name: "picks", unit: "req/s"},
		{name: "health", left: true},
		{name: "circuit", left: true},
		{name: "KV-tree", unit: "blocks", prio: 1},
		{name: "engine hit", unit: "last batch", prio: 2},
	}}
	for i := range w.Router {
		r := &w.Router[i]
		health := m.reading(r.Health, num)
		if r.Health.Present {
			health = toned("healthy", toneOK)
			if r.Health.Value == 0 {
				health = toned("UNHEALTHY", toneCrit)
			}
		}
		cb := m.reading(r.CB, num)
		if r.CB.Present {
			switch r.CB.Value {
			case 0:
				cb = txt("closed")
			case 1:
				cb = toned("OPEN", toneCrit)
			case 2:
				cb = toned("half-open", toneWarn)
			}
		}
		t.rows = append(t.rows, []cell{txt(clean(r.Replica, 30)), m.reading(r.InFlight, count),
			m.reading(r.Picks, rate), health, cb, m.reading(r.KVBlocks, num), m.reading(r.EngineHit, pct)})
	}
	lines, _, _, _ := t.fitTo(c.iw).render(c.st, c.iw, t.fullHeight(), 0)
	return lines
}

func (c *detailCtx) restartLines() []string {
	var rs []sources.Restart
	if c.d != nil {
		rs = c.d.Restarts
	} else {
		for _, e := range c.s.Events {
			if e.Kind == "restart" && e.TargetID == c.w.ID {
				rs = append(rs, sources.Restart{Time: e.Time, Reason: e.Detail})
			}
		}
	}
	if len(rs) == 0 {
		return []string{paint(c.st, toneMuted, "none seen since pdtop started")}
	}
	t := &table{cols: []column{
		{name: "time", left: true},
		{name: "ago"},
		{name: "reason", left: true, flex: true},
	}}
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		t.rows = append(t.rows, []cell{muted(r.Time.Format("15:04:05")), txt(ago(c.s.Time, r.Time)),
			toned(markRestart+" "+clean(r.Reason, 200), toneWarn)})
	}
	c.m.restart = true
	lines, _, _, _ := t.fitTo(c.iw).render(c.st, c.iw, t.fullHeight(), 0)
	return lines
}

func (c *detailCtx) eventLines() []string {
	var lines []string
	for i := len(c.s.Events) - 1; i >= 0 && len(lines) < 20; i-- {
		e := &c.s.Events[i]
		if e.TargetID != c.w.ID || e.Kind == "restart" {
			continue
		}
		l := e.Time.Format("15:04:05") + "  " + e.Kind
		if e.Detail != "" {
			l += ": " + clean(e.Detail, 200)
		}
		lines = append(lines, fit(l, c.iw))
	}
	return lines
}
