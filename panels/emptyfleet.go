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
func emptyFleet(c *drawCtx, what string) string {
	if len(c.s.Workers) == 0 {
		if why := discoveryWhy(c.s); why != "" {
			msg := "no workers discovered: " + why
			if !c.print {
				msg += " — see t"
			}
			return msg
		}
	}
	return what + " in this fleet"
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
