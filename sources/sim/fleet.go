package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Fleet is a simulated PD-disaggregated SGLang deployment: gateway
// replicas, prefill workers, decode workers and the KV-transfer paths
// between them. All methods are safe for concurrent use; scrapes see a
// consistent state between Steps.
type Fleet struct {
	mu   sync.RWMutex
	cfg  Config
	now  time.Duration // simulated time requested by Step
	simT time.Duration // simulated time reached, a whole number of ticks

	wl       *workload
	lbRng    *rand.Rand
	workers  []*worker // by id, never reused
	gateways []*replica
	paths    map[uint64]*path
	events   eventQueue
	seq      uint64
	nextReq  uint64
	pidNext  int
	cond     conditions
	scen     *scenarioRun

	srv    *server
	closed bool
}

// New builds a fleet at simulated time 0 with every worker warm (caches
// empty) and registered with every replica.
func New(cfg Config) (*Fleet, error) {
	c, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	sc, _ := scenarioByName(c.Scenario)
	if sc.setup != nil {
		sc.setup(&c)
	}
	rate := c.Workload.Rate
	if rate == 0 {
		rate = autoRate(c)
	}
	f := &Fleet{
		cfg:     c,
		wl:      newWorkload(c.Seed, c.Workload, rate),
		lbRng:   newRand(c.Seed, 2),
		paths:   map[uint64]*path{},
		pidNext: 1000 + int(mix(uint64(c.Seed), 3)%20000),
		cond:    baseConditions(),
	}
	for i := range c.Replicas {
		f.gateways = append(f.gateways, newReplica(f, i))
	}
	for range c.Prefill {
		f.addWorker(sources.RolePrefill, 0, 0)
	}
	for range c.Decode {
		f.addWorker(sources.RoleDecode, 0, 0)
	}
	for _, g := range f.gateways {
		g.startWorkers = len(f.workers)
		g.initMetrics()
	}
	f.scen = newScenarioRun(f, c.Scenario)
	return f, nil
}

// Config returns the fleet's resolved configuration (defaults filled in,
// adjusted by the scenario, e.g. replica-skew needs two replicas).
func (f *Fleet) Config() Config {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.cfg
}

// Rate is the base arrival rate in requests/s (Workload.Rate, or the
// auto-sized rate when that was 0), before scenario and burst factors.
func (f *Fleet) Rate() float64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.wl.rate
}

// Now is the simulated time since the fleet started.
func (f *Fleet) Now() time.Duration {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.now
}

// Step advances simulated time by dt. The simulation moves in whole ticks
// (Config.Tick), so the result depends only on the total time stepped,
// not on how it was split into calls.
func (f *Fleet) Step(dt time.Duration) {
	if dt <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now += dt
	for f.simT+f.cfg.Tick <= f.now {
		f.runTick(f.simT, f.simT+f.cfg.Tick)
		f.simT += f.cfg.Tick
	}
}

// Run drives Step from the wall clock until ctx is done: every 100 ms of
// wall time it advances the simulation by the elapsed wall time × speed
// (speed 1 is real time; 10 runs ten times faster).
func (f *Fleet) Run(ctx context.Context, speed float64) {
	if speed <= 0 {
		speed = 1
	}
	tk := time.NewTicker(100 * time.Millisecond)
	defer tk.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tk.C:
			f.Step(time.Duration(float64(now.Sub(last)) * speed))
			last = now
		}
	}
}

// runTick simulates [t0, t1).
func (f *Fleet) runTick(t0, t1 time.Duration) {
	f.scen.advance(t0)
	for _, w := range f.workers {
		f.lifecycle(w, t0)
	}
	for _, g := range f.gateways {
		g.timers(t0)
	}
	for _, t := range f.wl.arrivals(t0, t1, &f.cond) {
		f.schedule(t, evArrival, nil)
	}
	f.drainEvents(t1)
	for _, w := range f.workers {
		if w.p != nil {
			f.checkBootstrapTimeouts(w, t0)
			f.runPrefill(w, t0, t1)
		}
	}
	f.drainEvents(t1)
	for _, w := range f.workers {
		if w.d != nil {
			f.preallocate(w, t0)
			f.runDecode(w, t0, t1)
		}
	}
}

// lifecycle registers workers that finished warming up, retires drained
// removed workers, and keeps each endpoint open exactly while its process
// answers.
func (f *Fleet) lifecycle(w *worker, t time.Duration) {
	if !w.killed && w.up(t) && len(f.gateways) > 0 && f.gateways[0].view(w) == nil && !w.removed {
		f.register(w, t)
	}
	if w.removed && !w.killed && t >= w.goneAt {
		f.dropWork(w, t)
		w.killed = true
	}
	f.syncEndpoint(w, t)
}

// arrive is one client request reaching the load balancer in front of the
// gateway replicas at t.
func (f *Fleet) arrive(t time.Duration) {
	conv, segs, prompt, output, maxNew := f.wl.next(&f.cond)
	f.nextReq++
	r := &request{id: f.nextReq, conv: conv, segs: segs, prompt: prompt, output: output, maxNew: maxNew}
	f.pickReplica(conv).admit(r, t)
}

// pickReplica is the load balancer: conversation-hash affinity when
// configured, otherwise random (weighted by the scenario), skipping killed
// replicas.
func (f *Fleet) pickReplica(conv *conversation) *replica {
	var live []*replica
	var weights []float64
	total := 0.0
	for i, g := range f.gateways {
		if g.killed {
			continue
		}
		wt := 1.0
		if i < len(f.cond.lbWeights) {
			wt = f.cond.lbWeights[i]
		}
		live = append(live, g)
		weights = append(weights, wt)
		total += wt
	}
	if len(live) == 0 {
		return f.gateways[0]
	}
	if f.cfg.Router.SessionAffinity {
		return live[mix(conv.id, 7)%uint64(len(live))]
	}
	u := f.lbRng.Float64() * total
	for i, wt := range weights {
		if u < wt {
			return live[i]
		}
		u -= wt
	}
	return live[len(live)-1]
}

func (f *Fleet) nextPID() int {
	f.pidNext += 7 + int(mix(uint64(f.cfg.Seed), uint64(f.pidNext))%300)
	return f.pidNext
}

// addWorker creates a worker that answers after warmup; it joins the
// gateways' registries once it answers.
func (f *Fleet) addWorker(role sources.Role, t, warmup time.Duration) *worker {
	n := 0
	for _, x := range f.workers {
		if x.role == role {
			n++
		}
	}
	w := &worker{f: f, id: len(f.workers), role: role, name: fmt.Sprintf("%s-%d", role, n)}
	w.incarnate(t, warmup)
	f.workers = append(f.workers, w)
	if warmup == 0 {
		f.register(w, t)
	}
	return w
}

// dropWork fails every request w holds: the gateways see the attempt fail
// and retry elsewhere.
func (f *Fleet) dropWork(w *worker, t time.Duration) {
	for _, r := range w.legs() {
		r.gw.failAttempt(r, t, w)
	}
}

func (f *Fleet) worker(name string) *worker {
	for _, w := range f.workers {
		if w.name == name {
			return w
		}
	}
	return nil
}

func (f *Fleet) replicaNamed(name string) *replica {
	for _, g := range f.gateways {
		if g.name == name {
			return g
		}
	}
	return nil
}

// Kill makes a worker unreachable, as a host dropping off the network or a
// hung process would: its endpoint refuses connections, the requests it
// held fail (the gateways retry them elsewhere) and health checks fail.
// Its state and counters are kept. Killing a gateway replica closes its
// endpoint and the load balancer stops sending it traffic. Unknown names
// are ignored.
func (f *Fleet) Kill(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.worker(name); w != nil && !w.killed {
		w.killed = true
		f.dropWork(w, f.simT)
		f.syncEndpoint(w, f.simT)
	}
	if g := f.replicaNamed(name); g != nil {
		g.killed = true
		if g.ep != nil {
			g.ep.sync(false)
		}
	}
}

// Revive makes a killed worker or replica reachable again, with the state
// it had (use Restart for a fresh process).
func (f *Fleet) Revive(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.worker(name); w != nil && w.killed && !w.removed {
		w.killed = false
		f.syncEndpoint(w, f.simT)
	}
	if g := f.replicaNamed(name); g != nil {
		g.killed = false
		if g.ep != nil && !f.closed {
			g.ep.sync(true)
			g.url = g.ep.baseURL()
		}
	}
}

// Restart restarts a worker's process: the requests it held fail, and
// after Capacity.Warmup it answers again with an empty cache, counters
// from zero and a new pid. The gateways keep routing by their old view.
func (f *Fleet) Restart(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.worker(name); w != nil {
		f.restart(w, f.simT)
	}
}

func (f *Fleet) restart(w *worker, t time.Duration) {
	f.dropWork(w, t)
	w.killed = false
	w.incarnate(t, f.cfg.Capacity.Warmup)
	f.syncEndpoint(w, t)
}

// AddWorker starts a new, cold worker of the given role (prefill or
// decode). It answers after Capacity.Warmup and then joins every
// replica's registry (and /workers). When the fleet is served, its
// endpoint is bound at once and returned.
func (f *Fleet) AddWorker(role sources.Role) (Endpoint, error) {
	if role != sources.RolePrefill && role != sources.RoleDecode {
		return Endpoint{}, fmt.Errorf("sim: AddWorker: role %v, want prefill or decode", role)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.addWorker(role, f.simT, f.cfg.Capacity.Warmup)
	if f.srv != nil {
		if err := f.serveWorker(w); err != nil {
			return Endpoint{}, err
		}
	}
	return w.endpoint(), nil
}

// RemoveWorker takes a worker out of every replica's registry (smg then
// reports its health and breaker as −1); it finishes what it holds and
// its endpoint closes 30 s later.
func (f *Fleet) RemoveWorker(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w := f.worker(name); w != nil && !w.removed {
		f.removeWorker(w, f.simT)
	}
}

func (f *Fleet) removeWorker(w *worker, t time.Duration) {
	w.removed = true
	w.goneAt = t + 30*time.Second
	f.deregister(w)
}
