package discovery

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sanitize"
)

// Response shapes understood (sources.DiscoveryStatus.Shape).
const (
	ShapeSMG       = "smg /workers"
	ShapeLegacy    = "legacy /workers"
	ShapeListLoads = "/list_workers + /get_loads"
	ShapeList      = "/list_workers"
)

// listed is one worker as a gateway lists it.
type listed struct {
	raw  string // the URL as given (sanitised, for notes)
	url  string // the worker's metrics URL
	key  string // sources.WorkerKey of url
	role sources.Role
}

// errNotWorkerList means the body is not a worker list (a metrics
// listener that answers on any path, an HTML page, another API).
var errNotWorkerList = errors.New("not a worker list")

// parseWorkers reads GET /workers of smg (WorkerInfo with UUID ids and
// lower-case connection modes) and of sglang-router 0.2.x (ids equal to
// URLs, connection_mode in Rust Debug form "Http"); gateway.md §10.
// Entries pdtop cannot scrape are returned as rejection notes.
func parseWorkers(body []byte) (out []listed, rejected []string, shape string, err error) {
	var doc struct {
		Workers []json.RawMessage `json:"workers"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.Workers == nil {
		return nil, nil, "", errNotWorkerList
	}
	shape = ShapeLegacy
	for _, raw := range doc.Workers {
		var e struct {
			ID             any    `json:"id"`
			URL            any    `json:"url"`
			WorkerType     any    `json:"worker_type"`
			ConnectionMode any    `json:"connection_mode"`
			DPBaseURL      any    `json:"dp_base_url"`
			Status         string `json:"status"`
		}
		if json.Unmarshal(raw, &e) != nil {
			rejected = append(rejected, "an entry that is not an object")
			continue
		}
		u, _ := e.URL.(string)
		if base, ok := e.DPBaseURL.(string); ok && base != "" {
			u = base // one entry per DP rank under --dp-aware: scrape the base once
		}
		if id, ok := e.ID.(string); ok && id != "" && id != u {
			shape = ShapeSMG
		}
		if m, ok := e.ConnectionMode.(string); ok && m != "" && m == strings.ToLower(m) {
			shape = ShapeSMG
		}
		role, _ := e.WorkerType.(string)
		w, why := worker(u, sources.ParseRole(role))
		if why != "" {
			rejected = append(rejected, why)
			continue
		}
		out = append(out, w)
	}
	return out, rejected, shape, nil
}

// parseList reads GET /list_workers ({"urls":[…]}).
func parseList(body []byte) (out []listed, rejected []string, err error) {
	var doc struct {
		URLs []any `json:"urls"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.URLs == nil {
		return nil, nil, errNotWorkerList
	}
	for _, v := range doc.URLs {
		s, _ := v.(string)
		w, why := worker(s, sources.RoleUnknown)
		if why != "" {
			rejected = append(rejected, why)
			continue
		}
		out = append(out, w)
	}
	return out, rejected, nil
}

// parseLoads reads GET /get_loads for roles: the 0.1.x PD shape
// {"prefill":[{"engine":"(Prefill@<url>)"}],"decode":[…]} gives prefill and
// decode; the regular shape {"workers":[{"worker":"<url>"}]} means unified
// workers. It returns roles by worker key.
func parseLoads(body []byte) map[string]sources.Role {
	var doc struct {
		Prefill []struct {
			Engine any `json:"engine"`
		} `json:"prefill"`
		Decode []struct {
			Engine any `json:"engine"`
		} `json:"decode"`
		Workers []struct {
			Worker any `json:"worker"`
		} `json:"workers"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	out := map[string]sources.Role{}
	engine := func(v any, role sources.Role) {
		s, _ := v.(string)
		s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
		if _, after, ok := strings.Cut(s, "@"); ok {
			s = after
		}
		if s != "" {
			out[sources.WorkerKey(s)] = role
		}
	}
	for _, e := range doc.Prefill {
		engine(e.Engine, sources.RolePrefill)
	}
	for _, e := range doc.Decode {
		engine(e.Engine, sources.RoleDecode)
	}
	if len(doc.Prefill) == 0 && len(doc.Decode) == 0 {
		for _, e := range doc.Workers {
			if s, _ := e.Worker.(string); s != "" {
				out[sources.WorkerKey(s)] = sources.RoleUnified
			}
		}
	}
	return out
}

// dpSuffix is the "@<rank>" smg appends to a worker URL under --dp-aware.
var dpSuffix = regexp.MustCompile(`@\d+$`)

// worker turns a listed worker URL into its metrics URL: http or https
// only, no userinfo, path forced to /metrics, no query or fragment
// (robustness.md §6.6). why is a sanitised reason when it is rejected.
func worker(raw string, role sources.Role) (listed, string) {
	shown := sanitize.Truncate(raw, 60)
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return listed{}, "an entry without a URL"
	}
	if len(raw) > 2048 {
		return listed{}, "a URL over 2 KiB"
	}
	raw = dpSuffix.ReplaceAllString(raw, "")
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return listed{}, "unparsable URL " + quote(shown)
	}
	switch {
	case u.Scheme == "grpc" || u.Scheme == "grpcs":
		return listed{}, "gRPC worker " + quote(shown) + " (no HTTP metrics URL)"
	case u.Scheme != "http" && u.Scheme != "https":
		return listed{}, "scheme " + quote(sanitize.Truncate(u.Scheme, 16)) + " of " + quote(shown)
	case u.User != nil:
		return listed{}, "credentials in URL " + quote(sources.DisplayURL(raw))
	case u.Hostname() == "" || len(u.Host) > 260:
		return listed{}, "no usable host in " + quote(shown)
	}
	m := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}
	s := m.String()
	return listed{raw: shown, url: s, key: sources.WorkerKey(s), role: role}, ""
}

func quote(s string) string { return "«" + s + "»" }
