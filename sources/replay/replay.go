// Package replay plays a recording (sources/record) back as a
// sources.Backend: every recorded body goes through collect.FromBody into
// a store and out as snapshots, exactly as when it was scraped, on the
// recording's clock — at any speed, paused, or after a seek.
package replay

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
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
