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
		if d := states(w.Router); d != "" {
			why = append(why, d)
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

// states returns each replica's view of a worker's health and circuit
// breaker — "gateway-0 ok, gateway-1 unhealthy CB open" — when the
// replicas exposing them disagree, else "".
func states(views []sources.RouterView) string {
	type st struct{ health, cb float64 }
	var parts []string
	var first st
	n, same := 0, true
	for i := range views {
		r := &views[i]
		h, c := r.Health, r.CB
		if !(h.Present && sources.Finite(h.Value)) && !(c.Present && sources.Finite(c.Value)) {
			continue
		}
		s := st{health: 1, cb: 0} // a state not exposed counts as fine
		if h.Present && sources.Finite(h.Value) {
			s.health = h.Value
		}
		if c.Present && sources.Finite(c.Value) {
			s.cb = c.Value
		}
		if n == 0 {
			first = s
		} else if s != first {
			same = false
		}
		n++
		word := ""
		if s.health != 1 {
			word = healthWord(s.health)
		}
		if s.cb != 0 {
			word = strings.TrimSpace(word + " CB " + cbWord(s.cb))
		}
		if word == "" {
			word = "ok"
		}
		parts = append(parts, r.Replica+" "+word)
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
