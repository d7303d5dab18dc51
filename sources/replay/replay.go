// Package replay plays a recording (sources/record) back as a
// sources.Backend: every recorded body goes through collect.FromBody into
// a store and out as snapshots, exactly as when it was scraped, on the
// recording's clock — at any speed, paused, or after a seek.
package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/record"
	"github.com/pdtop/pdtop/sources/store"
)

// Options configure a Player.
type Options struct {
	// Speed is recorded seconds per wall-clock second (default 1).
	Speed float64
	// From starts playback this far into the recording.
	From time.Duration
	// Paused starts with the clock stopped.
	Paused bool
	// Store sizes the history; Interval defaults to the recording's.
	Store store.Options
	// Thresholds are attached to every snapshot and drive its diagnoses.
	Thresholds sources.Thresholds
	// Clock is the wall clock that drives playback (default time.Now).
	Clock func() time.Time
}

// member is one gzip member of the file: where it starts and the time of
// its first record.
type member struct {
	off   int64
	first time.Time
}

// targetList is a recorded target list.
type targetList struct {
	at      time.Time
	targets []sources.Target
}

// Player plays one recording. It implements sources.Player.
type Player struct {
	path string
	hdr  record.Header
	opts Options

	// Built by Open: seek points, target lists, the recording's span and
	// where a damaged file stops.
	members     []member
	lists       []targetList
	start, end  time.Time
	records     int
	damage      string // where and why the file stops, in full
	damageShort string // the same in a few words

	// work is held by the replay job while it reads and ingests.
	work    sync.Mutex
	st      *store.Store
	f       *os.File
	cur     *record.Reader
	pending *record.Record // read, not yet due

	// mu guards the playback state below; never held during I/O.
	mu         sync.Mutex
	pos        time.Time // everything up to pos is ingested
	anchorPos  time.Time // the position at anchorWall
	anchorWall time.Time
	speed      float64
	paused     bool
	reset      bool      // the job must rebuild history before going on
	catchUp    time.Time // a seek's target, until reached (zero: none)
	window     time.Duration
	ingestedTo time.Time
}

// rebuildSpan is how much history a seek rebuilds before the new
// position, beyond the snapshot window: the charts' minimum span.
const rebuildSpan = 5*time.Minute + 10*time.Second

// lagLimit is how far playback may fall behind its clock before the clock
// waits (at a speed the machine cannot keep up with, playback slows down
// instead of skipping).
const lagLimit = 2 * time.Second

// Open reads the recording's index (one pass over the file) and positions
// playback at its start plus opts.From. A file that is not a recording,
// or holds no scrape, is an error; a damaged file opens, and plays up to
// the damage.
func Open(path string, opts Options) (*Player, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := record.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	p := &Player{path: path, hdr: r.Header(), opts: opts}
	var last int64 = -1
	scrapes := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.damage = err.Error()
			if d, ok := err.(*record.DamageError); ok {
				p.damageShort = d.Short()
			}
			break
		}
		p.records++
		if rec.Member != last {
			p.members = append(p.members, member{off: rec.Member, first: rec.Time})
			last = rec.Member
		}
		if p.start.IsZero() || rec.Time.Before(p.start) {
			p.start = rec.Time
		}
		if rec.Time.After(p.end) {
			p.end = rec.Time
		}
		switch rec.Kind {
		case record.KindTargets:
			p.lists = append(p.lists, targetList{at: rec.Time, targets: rec.Targets})
		case record.KindScrape:
			scrapes++
		}
	}
	if scrapes == 0 {
		if p.damage != "" {
			return nil, fmt.Errorf("%s: no scrape before the damage: %s", filepath.Base(path), p.damage)
		}
		return nil, fmt.Errorf("%s: the recording holds no scrapes", filepath.Base(path))
	}
	if p.opts.Speed <= 0 {
		p.opts.Speed = 1
	}
	if p.opts.Store.Interval <= 0 {
		p.opts.Store.Interval = p.hdr.Interval
	}
	if p.opts.Clock == nil {
		p.opts.Clock = time.Now
	}
	p.speed = clampSpeed(p.opts.Speed)
	p.paused = opts.Paused
	from := p.start.Add(opts.From)
	if from.After(p.end) {
		from = p.end
	}
	p.anchorPos, p.anchorWall = from, p.opts.Clock()
	p.reset, p.catchUp = true, from
	p.pos = p.start
	return p, nil
}

func clampSpeed(s float64) float64 {
	return min(max(s, sources.MinSpeed), sources.MaxSpeed)
}

// Header returns the recording's header.
func (p *Player) Header() record.Header { return p.hdr }

// Records is the number of readable records.
func (p *Player) Records() int { return p.records }

// Damage says where and why the file stops being readable ("" if whole).
func (p *Player) Damage() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.damage
}

// want is where the clock says playback should be (mu held).
func (p *Player) want() time.Time {
	w := p.anchorPos
	if !p.paused {
		w = w.Add(time.Duration(float64(p.opts.Clock().Sub(p.anchorWall)) * p.speed))
	}
	if w.After(p.end) {
		w = p.end
	}
	if w.Before(p.start) {
		w = p.start
	}
	return w
}

// reanchor fixes the clock at position at (mu held).
func (p *Player) reanchor(at time.Time) {
	p.anchorPos, p.anchorWall = at, p.opts.Clock()
}

// Round returns the one replay job: read and ingest every record up to
// the clock's position.
func (p *Player) Round() []sources.Job {
	return []sources.Job{{Key: "replay", Run: p.Advance}}
}

// Busy is a no-op: the next round catches up.
func (p *Player) Busy(string) {}

// Advance ingests every record up to the clock's position, rebuilding
// history first after a seek; it stops early when ctx ends and goes on
// at the next call.
func (p *Player) Advance(ctx context.Context) {
	p.work.Lock()
	defer p.work.Unlock()
	p.mu.Lock()
	target, reset := p.want(), p.reset
	p.reset = false
	p.mu.Unlock()
	if reset || p.cur == nil {
		if err := p.rebuild(target); err != nil {
			p.mu.Lock()
			p.damage, p.damageShort = err.Error(), err.Error()
			p.mu.Unlock()
			return
		}
	}
	done := p.ingest(ctx, target)
	p.mu.Lock()
	defer p.mu.Unlock()
	if done {
		p.pos = target
	} else {
		p.pos = p.ingestedTo
	}
	if !p.catchUp.IsZero() && !p.pos.Before(p.catchUp) {
		p.catchUp = time.Time{}
	}
	// Playing faster than the machine replays: slow the clock down rather
	// than skip. Never while paused or catching up with a seek.
	if w := p.want(); w.Sub(p.pos) > lagLimit && !p.reset && !p.paused && p.catchUp.IsZero() {
		p.reanchor(p.pos)
	}
}

// rebuild starts a new store and a cursor at the member from which the
// history before target is replayed (work held).
func (p *Player) rebuild(target time.Time) error {
	from := target.Add(-rebuildSpan)
	p.mu.Lock()
	if w := p.window; w > 0 && target.Add(-w-10*time.Second).Before(from) {
		from = target.Add(-w - 10*time.Second)
	}
	p.mu.Unlock()
	m := 0
	for i, mb := range p.members {
		if !mb.first.After(from) {
			m = i
		}
	}
	if p.f != nil {
		p.f.Close()
	}
	f, err := os.Open(p.path)
	if err != nil {
		return err
	}
	if _, err := f.Seek(p.members[m].off, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	cur, err := record.NewReaderAt(f, p.members[m].off, p.hdr)
	if err != nil {
		f.Close()
		return err
	}
	p.f, p.cur, p.pending = f, cur, nil
	p.st = store.New(p.opts.Store)
	start := p.members[m].first
	var list *targetList
	for i := range p.lists {
		if !p.lists[i].at.After(start) {
			list = &p.lists[i]
		}
	}
	if list != nil {
		p.st.SetTargets(list.at, list.targets)
	}
	p.mu.Lock()
	p.ingestedTo = start
	p.pos = start
	p.mu.Unlock()
	return nil
}

// ingest applies records up to target; false when ctx ended first.
func (p *Player) ingest(ctx context.Context, target time.Time) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		rec := p.pending
		if rec == nil {
			r, err := p.cur.Next()
			if err != nil {
				// io.EOF or the damage Open already reported: the end.
				return true
			}
			rec = &r
		}
		if rec.Time.After(target) {
			p.pending = rec
			return true
		}
		p.pending = nil
		p.apply(rec)
		p.mu.Lock()
		p.ingestedTo = rec.Time
		p.mu.Unlock()
	}
}

// apply feeds one record to the store, through the same path as a live
// scrape.
func (p *Player) apply(rec *record.Record) {
	switch rec.Kind {
	case record.KindTargets:
		p.st.SetTargets(rec.Time, rec.Targets)
	case record.KindSkipped:
		p.st.Ingest(rec.Result)
	case record.KindScrape:
		res := rec.Result
		if res.Err == nil {
			res = collect.FromBody(res, rec.Body, rec.Warnings, nil)
		}
		p.st.Ingest(res)
	case record.KindObservation:
		p.st.Ingest(rec.Result)
	}
}

// Now is the recording's clock: the time up to which everything has
// been replayed.
func (p *Player) Now() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pos
}

// Snapshot derives the fleet at the replayed position.
func (p *Player) Snapshot(window time.Duration) *sources.Snapshot {
	p.mu.Lock()
	p.window = window
	pos := p.pos
	p.mu.Unlock()
	p.work.Lock()
	st := p.st
	p.work.Unlock()
	if st == nil {
		st = store.New(p.opts.Store)
	}
	return st.SnapshotWith(pos, window, p.opts.Thresholds)
}

// Progress reports the position in the recording.
func (p *Player) Progress() sources.PlayProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return sources.PlayProgress{File: filepath.Base(p.path), Start: p.start, End: p.end, Pos: p.pos,
		Speed: p.speed, Paused: p.paused, Seeking: p.reset || !p.catchUp.IsZero(),
		Ended: !p.pos.Before(p.end), Damage: p.damageShort}
}

// SetPaused stops or resumes the recording's clock.
func (p *Player) SetPaused(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if paused == p.paused {
		return
	}
	p.reanchor(p.want())
	p.paused = paused
}

// SetSpeed changes the playback speed, clamped to the limits.
func (p *Player) SetSpeed(s float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reanchor(p.want())
	p.speed = clampSpeed(s)
}

// Seek moves the position by d. Going back, or forward by more than the
// history kept, rebuilds history from the recording at the next round.
func (p *Player) Seek(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.want().Add(d)
	if at.After(p.end) {
		at = p.end
	}
	if at.Before(p.start) {
		at = p.start
	}
	p.reanchor(at)
	p.catchUp = at
	if at.Before(p.pos) || at.Sub(p.pos) > rebuildSpan {
		p.reset = true
	}
}

// Close releases the file.
func (p *Player) Close() error {
	p.work.Lock()
	defer p.work.Unlock()
	if p.f != nil {
		err := p.f.Close()
		p.f = nil
		return err
	}
	return nil
}

var _ sources.Player = (*Player)(nil)
