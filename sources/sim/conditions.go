package sim

// conditions are what the current scenario changes about the world, set
// afresh every tick as a function of the scenario's clock.
type conditions struct {
	rateMult     float64 // × the base arrival rate
	hotShare     float64 // share of new conversations about the announced documents
	hotDocs      int     // size of the announced document set
	docs         int     // > 0: draw documents from this many instead
	docZipfS     float64 // Zipf exponent for docs
	docBase      uint64  // first id of that document set
	outputMult   float64 // × the median output length
	outputSpread float64 // ≥ 0: overrides Workload.OutputSpread
	outputCap    int     // > 0: overrides Workload.OutputCap
	slow         []slowPath
	cuts         []cut
	lbWeights    []float64 // per replica; nil = even
	noBursts     bool      // a steady load: workload bursts suspended
}

// slowPath degrades one prefill→decode KV route.
type slowPath struct {
	p, d   int
	factor float64 // × Capacity.LinkGBps
}

// cut is a network partition between one replica and one worker.
type cut struct {
	replica, worker int
}

func baseConditions() conditions {
	return conditions{rateMult: 1, outputMult: 1, outputSpread: -1}
}

func (c *conditions) linkFactor(p, d int) float64 {
	for _, s := range c.slow {
		if s.p == p && s.d == d {
			return s.factor
		}
	}
	return 1
}

func (c *conditions) partitioned(replica, worker int) bool {
	for _, x := range c.cuts {
		if x.replica == replica && x.worker == worker {
			return true
		}
	}
	return false
}
