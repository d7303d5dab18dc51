package panels

import (
	"strconv"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// emptyFleet is the body of a panel with no workers to show: what ("no
// prefill workers") plus "in this fleet"; or, when the fleet has no worker
// at all and its workers come from gateway discovery, why none were found:
// "no workers discovered: gateway gw-0 DOWN (refused) — see t". A down
// gateway must not look like an empty fleet.
//
// With the Prometheus backend (Snapshot.QueryServer) the reason is the
// server's: "no workers: Prometheus server 127.0.0.1:1 DOWN (refused) —
// see t", or that the selector, or the server, has no worker series.
func emptyFleet(c *drawCtx, what string) string {
	if len(c.s.Workers) == 0 {
		msg := ""
		if why := discoveryWhy(c.s); why != "" {
			msg = "no workers discovered: " + why
		} else if why, seeT := queryServerWhy(c.s); why != "" {
			msg = "no workers: " + why
			if !seeT {
				return msg
			}
		}
		if msg != "" {
			if !c.print {
				msg += " — see t"
			}
			return msg
		}
	}
	return what + " in this fleet"
}

// queryServerWhy says why the Prometheus-API server gave no worker:
// "Prometheus server h:p DOWN (refused)" (or STALE, or waiting for its
// first answer); with the server answering, "no series match --selector
// {…} on the server (5 workers have sglang:num_running_reqs without it)"
// or "the server has no SGLang worker series (sglang:…)". seeT is
// true when the targets view says more. "" when the snapshot is not from
// a query server, or the server's pools count workers (they may just have
// no rows yet).
func queryServerWhy(s *sources.Snapshot) (why string, seeT bool) {
	q := s.QueryServer
	if q == nil || s.Prefill.Workers+s.Decode.Workers+s.Unified.Workers > 0 {
		return "", false
	}
	name := "Prometheus server " + clean(q.Host, 40)
	var srv *sources.TargetStatus
	for i := range s.Targets {
		if s.Targets[i].Name == q.Target && s.Targets[i].Role != sources.RoleGateway {
			srv = &s.Targets[i]
			break
		}
	}
	switch {
	case srv == nil:
		return "", false
	case srv.Health == sources.Pending:
		return "waiting for " + name, false
	case srv.Health != sources.Up && srv.LastError != nil:
		return name + " " + stateCell(srv).text + " (" + errorClass(srv).text + ")", true
	case !q.Probed:
		return "", false
	case q.Selector != "" && q.Unselected > 0:
		n := strconv.Itoa(q.Unselected) + " workers have "
		if q.Unselected == 1 {
			n = "1 worker has "
		}
		return "no series match --selector " + clean(q.Selector, 60) + " on the server (" + n +
			clean(q.Metric, 40) + " without it)", false
	case q.Selector != "":
		return "the server has no SGLang worker series (" + clean(q.Metric, 40) + "), with or without --selector " +
			clean(q.Selector, 60), false
	}
	return "the server has no SGLang worker series (" + clean(q.Metric, 40) + ") — is it scraping the workers?", false
}

// discoveryWhy says why gateway discovery listed no worker, one clause per
// replica (at most two, then "+N more"): "gateway gw-0 DOWN (refused)",
// "gateway gw-0 worker list failed (http-4xx 404)", "waiting for gateway
// gw-0's worker list", "gateway gw-0 lists no workers (3 rejected)". ""
// when discovery is off.
func discoveryWhy(s *sources.Snapshot) string {
	var why []string
	for i := range s.Discovery {
		d := &s.Discovery[i]
		name := "gateway " + clean(d.Gateway, 30)
		var gw *sources.TargetStatus
		for j := range s.Targets {
			if s.Targets[j].Name == d.Gateway && s.Targets[j].Role == sources.RoleGateway {
				gw = &s.Targets[j]
				break
			}
		}
		var w string
		switch {
		case gw != nil && gw.Health == sources.Down && gw.LastError != nil:
			w = name + " " + stateCell(gw).text + " (" + errorClass(gw).text + ")"
		case d.Err != nil:
			w = name + " worker list failed (" + string(d.Err.Class)
			if d.Err.Status != 0 && !strings.Contains(string(d.Err.Class), strconv.Itoa(d.Err.Status)) {
				w += " " + strconv.Itoa(d.Err.Status)
			}
			w += ")"
		case d.LastSuccess.IsZero():
			w = "waiting for " + name + "'s worker list"
		default:
			w = name + " lists no workers"
			var n []string
			if d.Rejected > 0 {
				n = append(n, strconv.Itoa(d.Rejected)+" rejected")
			}
			if d.Capped > 0 {
				n = append(n, strconv.Itoa(d.Capped)+" over the cap")
			}
			if len(n) > 0 {
				w += " (" + strings.Join(n, ", ") + ")"
			}
		}
		why = append(why, w)
	}
	if len(why) > 2 {
		why = append(why[:2], "+"+strconv.Itoa(len(why)-2)+" more")
	}
	return strings.Join(why, "; ")
}

// splitWords breaks s into lines of at most w cells at spaces (a word
// longer than w is cut by the caller's fit).
func splitWords(s string, w int) []string {
	var out []string
	cur := ""
	for _, wd := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = wd
		case width(cur)+1+width(wd) <= w:
			cur += " " + wd
		default:
			out = append(out, cur)
			cur = wd
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}
