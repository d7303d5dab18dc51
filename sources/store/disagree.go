package store

import (
	"math"
	"strconv"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// In-flight skew: a worker's share of each replica's in-flight requests
// to its pool (prefill, decode, unified) is compared across replicas; a
// difference of skewShare or more, on replicas each carrying at least
// skewMinTotal requests to that pool, is "wildly skewed". Replicas behind
// a load balancer see only their share of the traffic, so absolute
// counts are never compared.
const (
	skewShare    = 0.5
	skewMinTotal = 8
)

// markDisagreement sets WorkerView.Disagree for every worker the gateway
// replicas disagree about (gateway.md §9 "Detecting divergence"): health
// or circuit-breaker state differs, a replica that lists other workers
// does not list this one, or their in-flight views are wildly skewed.
func markDisagreement(snap *sources.Snapshot) {
	if len(snap.Gateways) < 2 {
		return
	}
	// Replicas that report per-worker series and answer now.
	listing := map[string]bool{}
	for i := range snap.Gateways {
		g := &snap.Gateways[i]
		if g.Health == sources.Up && len(g.Workers) > 0 {
			listing[g.Name] = true
		}
	}
	// Each replica's in-flight total per pool.
	type poolKey struct {
		replica string
		role    sources.Role
	}
	totals := map[poolKey]float64{}
	for i := range snap.Workers {
		w := &snap.Workers[i]
		for _, r := range w.Router {
			if r.InFlight.Present && sources.Finite(r.InFlight.Value) && r.InFlight.Value > 0 {
				totals[poolKey{r.Replica, w.Role}] += r.InFlight.Value
			}
		}
	}
	for i := range snap.Workers {
		w := &snap.Workers[i]
		if len(w.Router) == 0 {
			continue
		}
		var why []string
		if missing := notListedBy(w, snap.Gateways, listing); missing != "" {
			why = append(why, "not listed by "+missing)
		}
		if d := differs(w.Router, func(r *sources.RouterView) sources.Reading { return r.Health }, healthWord); d != "" {
			why = append(why, "health "+d)
		}
		if d := differs(w.Router, func(r *sources.RouterView) sources.Reading { return r.CB }, cbWord); d != "" {
			why = append(why, "circuit "+d)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		var parts []string
		for _, r := range w.Router {
			tot := totals[poolKey{r.Replica, w.Role}]
			if !r.InFlight.Present || !sources.Finite(r.InFlight.Value) || tot < skewMinTotal {
				continue
			}
			share := r.InFlight.Value / tot
			lo, hi = math.Min(lo, share), math.Max(hi, share)
			parts = append(parts, r.Replica+" "+strconv.FormatFloat(r.InFlight.Value, 'f', 0, 64)+
				" ("+strconv.FormatFloat(math.Round(share*100), 'f', 0, 64)+"%)")
		}
		if len(parts) > 1 && hi-lo >= skewShare {
			why = append(why, "in-flight skew: "+strings.Join(parts, ", "))
		}
		w.Disagree = strings.Join(why, "; ")
	}
}

// notListedBy names the listing replicas that have no view of w while
// another replica has one.
func notListedBy(w *sources.WorkerView, gws []sources.GatewayView, listing map[string]bool) string {
	has := map[string]bool{}
	for _, r := range w.Router {
		has[r.Replica] = true
	}
	var out []string
	for i := range gws {
		if n := gws[i].Name; listing[n] && !has[n] {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// differs returns "gateway-0 healthy, gateway-1 unhealthy" when the
// replicas exposing a state disagree on it, else "".
func differs(views []sources.RouterView, get func(*sources.RouterView) sources.Reading, word func(float64) string) string {
	var parts []string
	first, same, n := 0.0, true, 0
	for i := range views {
		r := get(&views[i])
		if !r.Present || !sources.Finite(r.Value) {
			continue
		}
		if n == 0 {
			first = r.Value
		} else if r.Value != first {
			same = false
		}
		n++
		parts = append(parts, views[i].Replica+" "+word(r.Value))
	}
	if n < 2 || same {
		return ""
	}
	return strings.Join(parts, ", ")
}

func healthWord(v float64) string {
	switch v {
	case 1:
		return "healthy"
	case 0:
		return "unhealthy"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func cbWord(v float64) string {
	switch v {
	case 0:
		return "closed"
	case 1:
		return "open"
	case 2:
		return "half-open"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
