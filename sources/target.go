package sources

import (
	"net/url"
	"strings"
)

// Role is what a target does in a prefill/decode-disaggregated fleet.
// It comes from flags, the config file or the gateway's worker list; worker
// labels (engine_type) are unreliable and only ever a hint.
type Role uint8

// Roles a target can have.
const (
	RoleUnknown Role = iota
	RolePrefill
	RoleDecode
	RoleUnified // a worker that both prefills and decodes (no PD split)
	RoleGateway
)

// String returns the lower-case role name used on screen and in JSON.
func (r Role) String() string {
	switch r {
	case RolePrefill:
		return "prefill"
	case RoleDecode:
		return "decode"
	case RoleUnified:
		return "unified"
	case RoleGateway:
		return "gateway"
	}
	return "unknown"
}

// ParseRole maps "prefill", "decode", "unified"/"regular", "gateway"/"router"
// to a Role; anything else is RoleUnknown.
func ParseRole(s string) Role {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "prefill":
		return RolePrefill
	case "decode":
		return RoleDecode
	case "unified", "regular", "mixed":
		return RoleUnified
	case "gateway", "router":
		return RoleGateway
	}
	return RoleUnknown
}

// IsWorker reports whether the role is an engine worker (not a gateway).
func (r Role) IsWorker() bool {
	return r == RolePrefill || r == RoleDecode || r == RoleUnified || r == RoleUnknown
}

// Order is the display order of roles: gateways first, then prefill,
// decode, unified, unknown.
func (r Role) Order() int {
	switch r {
	case RoleGateway:
		return 0
	case RolePrefill:
		return 1
	case RoleDecode:
		return 2
	case RoleUnified:
		return 3
	}
	return 4
}

// Origin says where pdtop learned about a target.
type Origin string

// Origins of targets.
const (
	OriginFlag    Origin = "flag"
	OriginConfig  Origin = "config"
	OriginGateway Origin = "gateway" // discovered from a gateway's worker list
	OriginDemo    Origin = "demo"
)

// Target is one HTTP endpoint pdtop scrapes.
type Target struct {
	// ID is unique and stable for the target's life: the redacted metrics URL.
	ID string
	// URL is the full metrics URL (may carry credentials in userinfo; never
	// display it: use ID or Name).
	URL string
	// Name is the short display name (host:port, or a configured name).
	Name string
	// Role is the target's role in the fleet.
	Role Role
	// Origin says where the target came from.
	Origin Origin
	// Gateway is the ID of the gateway replica that reported this worker, for
	// discovered targets.
	Gateway string
	// Addr is the address gateways know this worker by ("host:port"),
	// when it differs from the URL's (a worker scraped through a proxy or
	// an ingress); "" means the URL's host:port. It joins the gateways'
	// per-worker series, the worker lists and /engine_metrics to this
	// target.
	Addr string
	// Auth summarises how pdtop authenticates to the target, for the
	// targets view: "" (nothing sent), or e.g. "bearer", "basic",
	// "oauth2", "mTLS", "headers", comma-separated, plus "no-verify" when
	// TLS certificate checks are off. Never a secret.
	Auth string
}

// Key is the worker key gateways use for this target: WorkerKey(Addr),
// or WorkerKey(URL) when Addr is empty.
func (t Target) Key() string {
	if t.Addr != "" {
		return WorkerKey(t.Addr)
	}
	return WorkerKey(t.URL)
}

// DisplayURL returns scheme://host:port/path of raw with userinfo, query
// and fragment removed, so tokens in URLs never reach the screen or logs.
// An unparsable URL yields "<invalid URL>".
func DisplayURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "<invalid URL>"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// WorkerKey normalises a worker address as it appears in a gateway label
// ("http://10.0.0.1:30001", "grpc://h:1", "10.0.0.1:30001/") or in a metrics
// URL ("http://10.0.0.1:30001/metrics") to "host:port", so that the gateway's
// per-worker series and the worker's own target can be joined.
func WorkerKey(addr string) string {
	s := strings.TrimSpace(addr)
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	return strings.ToLower(s)
}
