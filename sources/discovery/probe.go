package discovery

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sanitize"
)

// maxNotes bounds the notes kept per replica.
const maxNotes = 4

// refresh asks the replica for its workers: the API base that answered
// last first, then the other candidates. On failure the previous list
// stays and the status says why.
func (r *replica) refresh(ctx context.Context, clock func() time.Time) {
	r.status.Time = clock()
	bases := APICandidates(r.Target.URL, r.APIURL)
	if r.base != "" {
		bases = append([]string{r.base}, without(bases, r.base)...)
	}
	var fails []string
	class := sources.ErrOther
	// noList: some base answered without a worker list and the others
	// did not answer at all (refused, timeout, DNS): the gateway has none.
	missingSeen, otherErr := false, false
	for _, base := range bases {
		ws, rejected, shape, se, missing := r.ask(ctx, base)
		if se == nil {
			r.base, r.workers = base, ws
			r.status.API = sources.DisplayURL(base + "/workers")
			if shape == ShapeListLoads || shape == ShapeList {
				r.status.API = sources.DisplayURL(base + "/list_workers")
			}
			r.status.Shape, r.status.Err, r.status.LastSuccess = shape, nil, r.status.Time
			r.status.Workers, r.status.Rejected = len(ws), len(rejected)
			r.status.Notes = notes(rejected)
			return
		}
		switch {
		case missing:
			missingSeen = true
		case se.Class != sources.ErrRefused && se.Class != sources.ErrTimeout && se.Class != sources.ErrDNS && se.Class != sources.ErrNetwork:
			otherErr = true
		}
		if len(fails) == 0 {
			class = se.Class
		}
		fails = append(fails, sources.DisplayURL(base)+": "+se.Message)
		if ctx.Err() != nil {
			break
		}
	}
	msg := strings.Join(fails, "; ")
	if missingSeen && !otherErr {
		class = sources.ErrHTTP4xx
		msg = "no worker list (the 2026 sgl-router has none: name its workers with --prefill/--decode or under targets:); tried " + msg
	}
	r.status.Err = &sources.ScrapeError{Class: class, Message: sanitize.Truncate(msg, 300)}
}

// ask tries one API base: GET /workers, else GET /list_workers (with
// /get_loads for roles). missing is true when the base answered but has
// no worker list (404 or not a worker list), as opposed to failing.
func (r *replica) ask(ctx context.Context, base string) (ws []listed, rejected []string, shape string, se *sources.ScrapeError, missing bool) {
	body, se := r.get(ctx, base+"/workers")
	if se == nil {
		ws, rejected, shape, err := parseWorkers(body)
		if err == nil {
			return ws, rejected, shape, nil, false
		}
	} else if !notFound(se) {
		return nil, nil, "", se, false
	}
	body, se2 := r.get(ctx, base+"/list_workers")
	if se2 != nil {
		if notFound(se2) {
			return nil, nil, "", &sources.ScrapeError{Class: sources.ErrHTTP4xx, Status: 404,
				Message: "no /workers or /list_workers"}, true
		}
		return nil, nil, "", se2, false
	}
	ws, rejected, err := parseList(body)
	if err != nil {
		return nil, nil, "", &sources.ScrapeError{Class: sources.ErrParse,
			Message: "/workers and /list_workers are not worker lists"}, true
	}
	shape = ShapeList
	if lb, se := r.get(ctx, base+"/get_loads"); se == nil {
		if roles := parseLoads(lb); len(roles) > 0 {
			shape = ShapeListLoads
			for i := range ws {
				if role, ok := roles[ws[i].key]; ok {
					ws[i].role = role
				}
			}
		}
	}
	return ws, rejected, shape, nil, false
}

func (r *replica) get(ctx context.Context, u string) ([]byte, *sources.ScrapeError) {
	resp := r.api.Fetch(ctx, u)
	return resp.Body, resp.Err
}

// notFound reports a 404/405 (the route does not exist on this port) or
// a body that is clearly not JSON (a metrics listener or a login page).
func notFound(se *sources.ScrapeError) bool {
	return se.Status == 404 || se.Status == 405 || se.Class == sources.ErrHTML
}

func notes(rejected []string) []string {
	if len(rejected) == 0 {
		return nil
	}
	out := []string{}
	for i, r := range rejected {
		if i == maxNotes {
			out = append(out, "…and "+strconv.Itoa(len(rejected)-maxNotes)+" more rejected")
			break
		}
		out = append(out, "rejected "+r)
	}
	return out
}

func without(list []string, s string) []string {
	var out []string
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}
