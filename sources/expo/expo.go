// Package expo turns a Prometheus text-exposition body (format 0.0.4, or an
// OpenMetrics body from a target that ignored our Accept header) into
// client_model metric families, leniently and cheaply.
//
// The parser proper is prometheus/common's expfmt TextParser with
// model.UTF8Validation; expfmt is strict (one bad line fails the whole body
// and leaves a partly filled map with invented zeros), so Parse wraps it:
//
//  1. A byte-level pre-pass splits the body into per-family blocks, asks
//     Options.Keep about each family and never builds objects for the rest.
//     It also strips trailing CRs, tolerates a missing final newline,
//     replaces invalid UTF-8, merges families split over several blocks,
//     drops repeated # TYPE / # HELP lines, and stops at # EOF.
//  2. The kept blocks are parsed in one expfmt call. If it fails, the
//     partial map is discarded, the blocks before the failing one are
//     parsed again together and the failing block is recovered on its own:
//     parsing resumes after each line expfmt rejects, so only the bad lines
//     are lost, each recorded with its original line number and a
//     sanitised excerpt. Values beyond float64 range become ±Inf; an
//     OpenMetrics exemplar or float timestamp is dropped from its line.
//  3. The result is normalised: duplicate series are collapsed to the last
//     one, a series cap is applied, and every label name, label value and
//     HELP text passes through sanitize.Text (the ingestion choke point).
//
// Parse never panics, runs in time linear in the body size, and never
// fails as a whole: what could not be used is counted in Result.Stats.
package expo

import (
	"sync"

	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

// Defaults applied when an Options field is zero.
const (
	// DefaultMaxSeries is the per-body series cap (series, i.e. dto.Metric
	// objects; a histogram series counts once, whatever its bucket count).
	DefaultMaxSeries = 50000
	// DefaultMaxProblems is how many problems are kept in detail.
	DefaultMaxProblems = 8
)

// Options tune Parse. The zero value keeps everything with the defaults.
type Options struct {
	// Keep reports whether the family with this name (exactly as exposed,
	// e.g. "sglang:num_running_reqs" or "sglang_num_running_reqs") is
	// wanted; nil keeps every family. Families it rejects are never turned
	// into objects and are counted in Stats.Skipped. A family named
	// <base>_created, <base>_gsum or <base>_gcount (Python's separate
	// gauge families) is also kept when Keep accepts <base> (or
	// <base>_total for _created). Keep is consulted once per family, though
	// a _created family adds calls for its base names; it must be cheap,
	// deterministic and, when Parse runs concurrently, safe for
	// concurrent use.
	Keep func(name string) bool
	// MaxSeries caps the series kept per body; 0 (or less) means
	// DefaultMaxSeries. Series beyond it are dropped and counted in
	// Stats.Dropped, with a warning.
	MaxSeries int
	// MaxProblems is how many problems are kept in Stats.Problems (the
	// ones with the lowest line numbers); 0 (or less) means
	// DefaultMaxProblems. Stats.ProblemCount always counts all of them.
	MaxProblems int
}

// Result is what Parse made of one body.
type Result struct {
	// Families holds the kept families keyed by family name exactly as
	// exposed (a quoted UTF-8 name is given unquoted). Label pairs of each
	// series are sorted by name; every label name, label value and HELP
	// string is sanitised. A series whose sample value could not be parsed
	// is absent, never zero; a histogram or summary line that was lost
	// leaves that field unset (nil), so check SampleCount/SampleSum for nil
	// rather than trusting the getters' zero.
	Families map[string]*dto.MetricFamily
	// Declared lists every family name seen in a # TYPE line, in order of
	// first appearance, whether kept, skipped or empty (expfmt drops
	// families without samples; this does not). Names that are not
	// printable are left out.
	Declared []string
	// Stats counts what was kept, skipped, dropped and what went wrong.
	Stats sources.ParseStats
	// OpenMetrics is true when the body looked like OpenMetrics (# EOF,
	// # UNIT, or an OpenMetrics-only TYPE) although we asked for text.
	OpenMetrics bool
}

// Parse parses body leniently (see the package comment). It never fails:
// lines it cannot use are recorded in Result.Stats.Problems and counted in
// Stats.ProblemCount, and everything else is returned. body is not
// modified or retained. Parse is safe for concurrent use.
func Parse(body []byte, opt Options) Result {
	r, _ := run(body, opt)
	return r
}

// run is Parse, also returning how many bytes expfmt read in all (tests
// use it to check that recovery stays linear).
func run(body []byte, opt Options) (Result, int) {
	if opt.MaxSeries <= 0 {
		opt.MaxSeries = DefaultMaxSeries
	}
	if opt.MaxProblems <= 0 {
		opt.MaxProblems = DefaultMaxProblems
	}
	sc := scratchPool.Get().(*scratch)
	defer sc.release()

	s := newScanner(body, opt, sc)
	s.scan()
	s.emit()

	pp := &parser{s: s, p: newTextParser()}
	fams := pp.parseAll()
	s.normalise(fams)

	return Result{
		Families:    fams,
		Declared:    s.declared,
		Stats:       s.stats(len(fams)),
		OpenMetrics: s.openMetrics(),
	}, pp.parsed
}

// scratch holds per-call buffers that are reused across calls: the
// rebuilt body handed to expfmt and the per-line bookkeeping. Nothing in a
// Result points into it.
type scratch struct {
	out     []byte  // kept blocks, rebuilt for expfmt
	lineMap []int32 // out line index (0-based) → original 1-based line
	recs    []lineRec
	alt     []byte // lines rewritten by the pre-pass (invalid UTF-8)
	order   []int32
	blocks  []block
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled is the largest buffer kept in the pool, so one huge body does
// not pin its memory forever.
const maxPooled = 4 << 20

func (sc *scratch) release() {
	if cap(sc.out) > maxPooled || cap(sc.alt) > maxPooled || cap(sc.recs) > maxPooled/24 {
		return
	}
	sc.out = sc.out[:0]
	sc.lineMap = sc.lineMap[:0]
	sc.recs = sc.recs[:0]
	sc.alt = sc.alt[:0]
	sc.order = sc.order[:0]
	sc.blocks = sc.blocks[:0]
	scratchPool.Put(sc)
}
