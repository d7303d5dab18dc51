package sim

import (
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Scenario names.
const (
	// ScenarioSteady: nominal traffic. Signature: every panel calm — no
	// 429s, no retries, no transfer failures or retractions; prefill
	// queues near zero; the workers' actual prefix-hit ratio stable
	// (≈0.5–0.8) and a little below the router's prediction.
	ScenarioSteady = "steady"
	// ScenarioAnnouncement: at 1:00 a company-wide email links a new
	// handbook of 100 documents; traffic jumps ×1.5 (decaying from 2:00) and
	// 90 % of new conversations are about the handbook. Signature: in the
	// first minute the handbook is cold on every worker — actual hit ratio
	// drops, prefill compute (uncached tokens/s), prefill queue time and
	// TTFT rise; a couple of minutes later reuse has made it warm and
	// the hit ratio is back at or above the steady level while the traffic
	// is still elevated.
	ScenarioAnnouncement = "announcement"
	// ScenarioPrefillRestart: prefill-0 restarts at 1:30 (refuses
	// connections during its 20 s warm-up, then answers with counters from
	// zero, a new pid and an empty cache). Signature: the restart panel shows
	// the counter reset and pid change; retries and breakers around it; then,
	// once the breakers let traffic back (about 2:00), the routers — still
	// believing prefill-0 holds its documents — send them there: predicted
	// hits stay high (legacy hits/misses, 2026 selected/query blocks) while
	// prefill-0's actual hit ratio drops well below its peers and its own
	// earlier level for the next half minute or so, as it recomputes whole
	// documents.
	ScenarioPrefillRestart = "prefill-restart"
	// ScenarioEvictionPressure: at 1:00 a batch job sweeps a six times
	// larger document set with flat popularity. Signature: evicted tokens/s
	// jump on every prefill worker, KV (used + evictable) stays full, and the
	// gap between the router's predicted hits and the workers' actual hits
	// widens — the routers' trees still list documents the workers evicted.
	ScenarioEvictionPressure = "eviction-pressure"
	// ScenarioReplicaSkew: the load balancer sends 75 % of traffic to
	// gateway-0, and at 1:00 gateway-1 loses its network path to prefill-0.
	// Signature: the replicas disagree — gateway-1 counts failures on
	// prefill-0 and reports it unhealthy (and may open its breaker) while
	// gateway-0 reports it healthy and keeps using it; their intake (3:1),
	// per-worker in-flight vectors and predicted-hit ratios differ. Needs ≥ 2
	// replicas (the scenario raises Replicas to 2).
	ScenarioReplicaSkew = "replica-skew"
	// ScenarioCongestedLink: at 1:00 the KV path prefill-0 → decode-0 drops
	// to 1 % of its bandwidth. Signature: prefill-0's KV-transfer latency
	// p99 climbs past the histogram's top bucket (shown as ">5s");
	// prefill-0's in-flight queue and decode-0's transfer queue stay
	// non-empty; transfer failures and timeouts appear on exactly those two
	// workers; both are otherwise healthy — a good pair on a bad route.
	// The per-transfer speed (GB/s) does not fall: SGLang observes speed and
	// size only for transfers that complete, and on the slow path most time
	// out, while prefill-0's transfers to decode-1 keep full speed; for the
	// same reason its bytes sent per second follow the traffic the router
	// gives it, not the link.
	ScenarioCongestedLink = "congested-link"
	// ScenarioDecodeSaturation: at 1:00 a "write the full report" feature
	// launches: outputs five times longer and alike in length (cap 4096),
	// a ×3 click burst for 20 s, then traffic ×1.2. Signature: decode KV
	// usage climbs to ~1, the decode prealloc queue and the prefill bootstrap
	// queue grow together (prefill idles, waiting for decode), ITL rises,
	// gateways fill their admission limit and answer 429. Retractions stay
	// rare: admission keeps free what it expects running requests to still
	// generate; only a cohort admitted together may outgrow it.
	ScenarioDecodeSaturation = "decode-saturation"
	// ScenarioScaleOut: prefill is overloaded by a wide set of long reports
	// (little reuse, twice the usual length; no bursts); at 1:00 a new
	// prefill worker starts and after its warm-up (1:20) joins every
	// gateway's /workers. Signature: pool size +1; the new worker takes
	// traffic at once (least loaded) with a cold cache — its hit ratio starts
	// well below the fleet's; the prefill waiting queue and TTFT come down.
	ScenarioScaleOut = "scale-out"
	// ScenarioCycle runs every scenario in turn (the live-demo default),
	// starting with announcement and ending with a minute of steady;
	// conditions reset between scenarios and scale-out's worker is removed
	// again at the end of its turn.
	ScenarioCycle = "cycle"
)

// ScenarioInfo describes one scenario for --help and for the demo's
// status line.
type ScenarioInfo struct {
	// Name is what Config.Scenario accepts.
	Name string
	// Description is one line: what happens.
	Description string
	// Signature says which panel shows what when it happens.
	Signature string
	// Length is one run of the scenario in simulated time (its turn in
	// the cycle; steady's is one minute there, and endless on its own).
	Length time.Duration
}

type scenario struct {
	info  ScenarioInfo
	setup func(*Config)
	// script sets the conditions for the scenario's clock off and fires
	// one-shot events; it is called once per tick.
	script func(s *scenarioRun, off time.Duration)
}

// scenarios, in cycle order: the cycle opens with something that moves
// within a minute (each scenario's first minute is steady traffic, its
// baseline), and steady's own turn is a calm minute before it starts over.
var scenarios = []scenario{
	{info: ScenarioInfo{ScenarioAnnouncement, "a company-wide email links 100 new documents (1:00)",
		"cache: actual hit ratio dips then recovers above steady; prefill queueing and TTFT p99 spike in the first minute",
		5 * time.Minute}, script: announcement},
	{info: ScenarioInfo{ScenarioPrefillRestart, "prefill-0 restarts at 1:30",
		"restarts: prefill-0 counter reset and new pid; cache: router still predicts warm while prefill-0's actual hits drop",
		5 * time.Minute}, script: prefillRestart},
	{info: ScenarioInfo{ScenarioEvictionPressure, "a batch job sweeps a 6x larger document set (1:00)",
		"cache: evicted tokens/s jump, predicted-vs-actual gap widens; prefill KV full",
		5 * time.Minute}, script: evictionPressure},
	{info: ScenarioInfo{ScenarioReplicaSkew, "75/25 load balancer; gateway-1 loses prefill-0 at 1:00",
		"restarts & retries: gateway-1 sees prefill-0 fail and go unhealthy, gateway-0 does not; per-replica intake 3:1",
		4 * time.Minute}, setup: func(c *Config) { c.Replicas = max(c.Replicas, 2) }, script: replicaSkew},
	{info: ScenarioInfo{ScenarioCongestedLink, "KV path prefill-0 -> decode-0 drops to 1% bandwidth (1:00)",
		"KV transfer: prefill-0 latency p99 past the top bucket, in-flight/transfer queues stuck, failures on prefill-0 and decode-0 only; per-transfer GB/s unchanged (only completed transfers are timed)",
		4 * time.Minute}, script: congestedLink},
	{info: ScenarioInfo{ScenarioDecodeSaturation, "a feature writing 5x longer answers launches at 1:00",
		"decode admission: KV usage ~1, prealloc and bootstrap queues grow together, ITL up, 429s",
		5 * time.Minute}, script: decodeSaturation},
	{info: ScenarioInfo{ScenarioScaleOut, "overloaded prefill pool; a new prefill worker joins at 1:00",
		"targets/capacity: pool +1, new worker in /workers takes traffic with a cold cache; prefill queue shrinks",
		5 * time.Minute}, script: scaleOut},
	{info: ScenarioInfo{ScenarioSteady, "nominal document-assistant traffic with occasional bursts",
		"all panels calm: no 429s, retries or transfer failures; small prefill queues; actual hit ratio stable a little below predicted",
		time.Minute}, script: func(*scenarioRun, time.Duration) {}},
}

// Scenarios lists the scenarios in cycle order (the cycle itself is
// ScenarioCycle, or an empty Config.Scenario).
func Scenarios() []ScenarioInfo {
	out := make([]ScenarioInfo, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.info
	}
	return out
}

func scenarioByName(name string) (scenario, bool) {
	if name == ScenarioCycle {
		return scenario{}, true
	}
	for _, s := range scenarios {
		if s.info.Name == name {
			return s, true
		}
	}
	return scenario{}, false
}

// scenarioRun plays one scenario, or the cycle.
type scenarioRun struct {
	f        *Fleet
	list     []scenario
	cycle    bool
	i        int
	segStart time.Duration
	added    []*worker // workers the current turn added (removed after it in the cycle)
}

func newScenarioRun(f *Fleet, name string) *scenarioRun {
	s := &scenarioRun{f: f}
	if name != ScenarioCycle {
		sc, _ := scenarioByName(name)
		s.list = []scenario{sc}
		return s
	}
	s.cycle = true
	for _, sc := range scenarios {
		if sc.info.Name == ScenarioReplicaSkew && f.cfg.Replicas < 2 {
			continue
		}
		s.list = append(s.list, sc)
	}
	return s
}

// Scenario names the scenario playing now and how far into it the fleet
// is (simulated time).
func (f *Fleet) Scenario() (name string, elapsed time.Duration) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := f.scen
	return s.list[s.i].info.Name, f.simT - s.segStart
}

func (s *scenarioRun) advance(t time.Duration) {
	if s.cycle && t-s.segStart >= s.list[s.i].info.Length {
		for _, w := range s.added {
			if !w.removed {
				s.f.removeWorker(w, t)
			}
		}
		s.added = nil
		s.i = (s.i + 1) % len(s.list)
		s.segStart = t
	}
	s.f.cond = baseConditions()
	s.list[s.i].script(s, t-s.segStart)
}

// at reports whether the scenario clock crossed mark during this tick.
func (s *scenarioRun) at(off, mark time.Duration) bool {
	return off >= mark && off < mark+s.f.cfg.Tick
}

// ramp is 1 before from, falls linearly to 0 at to.
func ramp(off, from, to time.Duration) float64 {
	switch {
	case off <= from:
		return 1
	case off >= to:
		return 0
	}
	return 1 - float64(off-from)/float64(to-from)
}

func announcement(s *scenarioRun, off time.Duration) {
	if off < time.Minute {
		return
	}
	c := &s.f.cond
	c.hotDocs = 100
	c.rateMult = 1 + 0.5*ramp(off, 2*time.Minute, 3*time.Minute)
	c.hotShare = 0.4 + 0.5*ramp(off, 150*time.Second, 270*time.Second)
}

func prefillRestart(s *scenarioRun, off time.Duration) {
	if s.at(off, 90*time.Second) {
		if w := s.f.firstOf(sources.RolePrefill); w != nil {
			s.f.restart(w, s.f.simT)
		}
	}
}

func evictionPressure(s *scenarioRun, off time.Duration) {
	if off < time.Minute {
		return
	}
	c := &s.f.cond
	c.docs = 6 * s.f.cfg.Workload.Documents
	c.docZipfS = 0.6
	c.rateMult = 1.1
}

func replicaSkew(s *scenarioRun, off time.Duration) {
	c := &s.f.cond
	c.lbWeights = []float64{3, 1}
	if off >= time.Minute && len(s.f.gateways) > 1 {
		if w := s.f.firstOf(sources.RolePrefill); w != nil {
			c.cuts = append(c.cuts, cut{replica: 1, worker: w.id})
		}
	}
}

func congestedLink(s *scenarioRun, off time.Duration) {
	if off < time.Minute {
		return
	}
	p, d := s.f.firstOf(sources.RolePrefill), s.f.firstOf(sources.RoleDecode)
	if p != nil && d != nil {
		s.f.cond.slow = append(s.f.cond.slow, slowPath{p: p.id, d: d.id, factor: 0.01})
	}
}

func decodeSaturation(s *scenarioRun, off time.Duration) {
	if off < time.Minute {
		return
	}
	c := &s.f.cond
	// Reports are long and alike in length: a cohort admitted together
	// outgrows what the decode scheduler reserved for it.
	c.outputMult, c.outputSpread, c.outputCap, c.rateMult = 5, 0.3, 4096, 1.2
	if off < time.Minute+20*time.Second {
		c.rateMult = 3 // launch-day click burst
	}
}

func scaleOut(s *scenarioRun, off time.Duration) {
	c := &s.f.cond
	c.docs, c.docBase, c.docZipfS = 4*s.f.cfg.Workload.Documents, reportDocBase, 0.7
	c.noBursts = true
	c.rateMult = 1.1
	if s.at(off, time.Minute) {
		w := s.f.addWorker(sources.RolePrefill, s.f.simT, s.f.cfg.Capacity.Warmup)
		if s.f.srv != nil {
			_ = s.f.serveWorker(w) // a bind failure leaves it unserved, not the fleet broken
		}
		s.added = append(s.added, w)
	}
}

// firstOf is the lowest-id live worker of a role (the scenarios' target).
func (f *Fleet) firstOf(role sources.Role) *worker {
	for _, w := range f.workers {
		if w.role == role && !w.removed {
			return w
		}
	}
	return nil
}
