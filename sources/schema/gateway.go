package schema

import (
	"strconv"

	"github.com/pdtop/pdtop/sources"
)

// Helpers shared by the three gateway adapters (gateway_smg.go,
// gateway_legacy.go, gateway_2026.go). Gateway series have no rank labels;
// series of one family are summed unless a rule says otherwise, and
// per-worker series are keyed by sources.WorkerKey of their worker label so
// they join with the worker's own target.

// Status classes used as Keys of SigGWResponses.
const (
	Class2xx   = "2xx"   // 200–299
	Class429   = "429"   // rate limited / admission queue full
	Class408   = "408"   // admission queue timeout
	Class4xx   = "4xx"   // other client errors
	Class5xx   = "5xx"   // server errors (503 backpressure included)
	ClassOther = "other" // 1xx, 3xx and unparsable codes, kept so classes add up to the total
)

// StatusClass maps an HTTP status code label ("200", "429", …) to the Key
// used for SigGWResponses.
func StatusClass(code string) string {
	n, err := strconv.Atoi(code)
	switch {
	case err != nil:
		return ClassOther
	case n == 429:
		return Class429
	case n == 408:
		return Class408
	case n >= 200 && n < 300:
		return Class2xx
	case n >= 400 && n < 500:
		return Class4xx
	case n >= 500 && n < 600:
		return Class5xx
	}
	return ClassOther
}

// perWorker returns a rule keyed by sources.WorkerKey(label). SMG's −1
// sentinels (removed worker, no data) and any other negative value leave
// that worker's point absent.
func perWorker(sig sources.Signal, label string, a agg, aliases []alias) rule {
	return rule{sig: sig, aliases: aliases, agg: a, keyLabel: label, keyFn: sources.WorkerKey, dropNeg: true}
}

// byStatus returns a SigGWResponses rule over a status_code-labelled counter.
func byStatus(name string) rule {
	return rule{sig: sources.SigGWResponses, aliases: names(name), keyLabel: "status_code", keyFn: StatusClass}
}
