package replay

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/record"
	"github.com/pdtop/pdtop/sources/store"
)

// Playback: the replay job (Advance), history rebuilt after a seek, and
// the controls the UI drives.

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
