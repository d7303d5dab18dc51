// Package config parses and validates pdtop's YAML configuration file:
// static targets and their roles, gateway replicas (with worker discovery
// and the /engine_metrics fallback), refresh interval, scrape timeout and
// window, on-screen thresholds and SLOs, and per-target HTTP settings in
// prometheus/common's HTTPClientConfig shape, so the authorization,
// basic_auth, tls_config and proxy blocks of a Prometheus scrape config
// can be pasted as they are.
//
// Parse works on bytes (cmd reads the file) and returns errors that name
// the field, e.g. `targets[2].url: scheme "ftp" not supported`, or the
// line, for YAML syntax and unknown fields. Secret values never appear in
// errors, and the parsed File prints without them (see Secret and HTTP).
// docs/config.example.yaml is an annotated example.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"time"

	pconfig "github.com/prometheus/common/config"
	yaml "go.yaml.in/yaml/v2"

	"github.com/pdtop/pdtop/sources"
)

// Defaults for fields left out.
const (
	DefaultDiscoveryInterval = 30 * time.Second
	DefaultMaxDiscovered     = 256
)

// Engine-metrics modes of a gateway (Gateway.EngineMetrics).
const (
	// EngineMetricsAuto reads a worker through the gateway's
	// /engine_metrics re-export only while scraping it directly fails.
	EngineMetricsAuto = "auto"
	// EngineMetricsOnly never scrapes the workers this gateway lists
	// directly: their figures all come from its /engine_metrics (workers
	// on a network pdtop cannot reach).
	EngineMetricsOnly = "only"
	// EngineMetricsOff never reads /engine_metrics.
	EngineMetricsOff = "off"
)

// File is a parsed, validated configuration. Zero durations and
// thresholds mean "not set here" (flags or defaults apply).
type File struct {
	Interval, Timeout, Window time.Duration
	// MaxBodyBytes caps every body after decompression (0 = default).
	MaxBodyBytes int64
	Thresholds   sources.Thresholds
	Discovery    Discovery
	Gateways     []Gateway
	Targets      []Target
	// Prometheus, when set, reads the fleet from a query server.
	Prometheus *Prometheus
}

// Gateway is one gateway replica.
type Gateway struct {
	// URL is the metrics URL (path /metrics when none was given); it
	// prints without its query string.
	URL URL
	// Name is the display name (host:port unless configured).
	Name string
	// APIURL is scheme://host:port of the gateway's serving API (where
	// /workers lives), "" to probe the metrics port, then :30000.
	APIURL string
	// Discovery is whether to list workers from this replica.
	Discovery bool
	// EngineMetrics is EngineMetricsAuto, EngineMetricsOnly or
	// EngineMetricsOff.
	EngineMetrics string
	// HTTP settings for the metrics URL and the API.
	HTTP HTTP
	// AllowInsecureCredentials permits credentials over plain http to a
	// non-loopback host.
	AllowInsecureCredentials bool
}

// Target is one statically configured worker.
type Target struct {
	URL  URL    // metrics URL; prints without its query string
	Name string // display name (host:port unless configured)
	Role sources.Role
	// WorkerAddr is the host:port the gateways know this worker by, when
	// pdtop reaches it at another address (a proxy, an ingress); "" =
	// the URL's host:port.
	WorkerAddr string
	HTTP       HTTP
	// AllowInsecureCredentials permits credentials over plain http to a
	// non-loopback host.
	AllowInsecureCredentials bool
}

// Discovery configures worker discovery from gateways.
type Discovery struct {
	// Interval between worker-list refreshes (default 30s).
	Interval time.Duration
	// MaxTargets caps the discovered workers over all replicas (default 256).
	MaxTargets int
	// CredentialsFor lists the hosts a discovered worker may have for the
	// gateway's credentials (and TLS client certificate) to be sent to it;
	// empty = never (robustness.md §6.6).
	CredentialsFor HostList
	// AllowNetworks are addresses exempt from the default block of
	// link-local and cloud-metadata ranges.
	AllowNetworks HostList
}

type rawFile struct {
	Interval     duration           `yaml:"interval"`
	Timeout      duration           `yaml:"timeout"`
	Window       duration           `yaml:"window"`
	MaxBodyBytes int64              `yaml:"max_body_bytes"`
	Thresholds   sources.Thresholds `yaml:"thresholds"`
	Discovery    rawDiscovery       `yaml:"discovery"`
	Gateways     []rawGateway       `yaml:"gateways"`
	Targets      []rawTarget        `yaml:"targets"`
	Prometheus   *rawPrometheus     `yaml:"prometheus"`
}

type rawDiscovery struct {
	Interval       duration `yaml:"interval"`
	MaxTargets     int      `yaml:"max_targets"`
	CredentialsFor []string `yaml:"credentials_for"`
	AllowNetworks  []string `yaml:"allow_networks"`
}

type rawGateway struct {
	URL                      string                   `yaml:"url"`
	Name                     string                   `yaml:"name"`
	APIURL                   string                   `yaml:"api_url"`
	Discovery                *bool                    `yaml:"discovery"`
	EngineMetrics            string                   `yaml:"engine_metrics"`
	AllowInsecureCredentials bool                     `yaml:"allow_insecure_credentials"`
	HTTP                     pconfig.HTTPClientConfig `yaml:",inline"`
}

type rawTarget struct {
	URL                      string                   `yaml:"url"`
	Name                     string                   `yaml:"name"`
	Role                     string                   `yaml:"role"`
	WorkerAddr               string                   `yaml:"worker_addr"`
	AllowInsecureCredentials bool                     `yaml:"allow_insecure_credentials"`
	HTTP                     pconfig.HTTPClientConfig `yaml:",inline"`
}

// defaultHTTP is what a target's HTTP settings start from: like
// Prometheus, HTTP/2 on; unlike its default, redirects are not followed
// (a /metrics endpoint has no reason to redirect; robustness.md §6.4).
var defaultHTTP = pconfig.HTTPClientConfig{EnableHTTP2: true, FollowRedirects: false}

// UnmarshalYAML fills the HTTP defaults before decoding.
func (g *rawGateway) UnmarshalYAML(unmarshal func(any) error) error {
	*g = rawGateway{HTTP: defaultHTTP}
	type plain rawGateway
	return unmarshal((*plain)(g))
}

// UnmarshalYAML fills the HTTP defaults before decoding.
func (t *rawTarget) UnmarshalYAML(unmarshal func(any) error) error {
	*t = rawTarget{HTTP: defaultHTTP}
	type plain rawTarget
	return unmarshal((*plain)(t))
}

// Parse decodes and validates a configuration file's contents. dir is
// the file's directory: relative *_file paths are taken from there.
// Unknown fields are errors. The error names the line (YAML problems) or
// the field (everything else) and never contains a secret value.
func Parse(data []byte, dir string) (*File, error) {
	var raw rawFile
	if err := yaml.UnmarshalStrict(data, &raw); err != nil {
		return nil, yamlError(err, data)
	}
	return raw.validate(dir)
}

func (r *rawFile) validate(dir string) (*File, error) {
	f := &File{Interval: time.Duration(r.Interval), Timeout: time.Duration(r.Timeout),
		Window: time.Duration(r.Window), MaxBodyBytes: r.MaxBodyBytes, Thresholds: r.Thresholds}
	if f.Interval != 0 && f.Interval < 100*time.Millisecond {
		return nil, fmt.Errorf("interval: %s is too short (minimum 100ms)", f.Interval)
	}
	if f.Interval != 0 && f.Timeout > f.Interval {
		return nil, fmt.Errorf("timeout: %s is longer than interval %s (a scrape must end before the next one starts)", f.Timeout, f.Interval)
	}
	if f.Window != 0 && f.Window > 15*time.Minute {
		return nil, fmt.Errorf("window: %s is longer than the 15m of history pdtop keeps", f.Window)
	}
	if f.MaxBodyBytes < 0 {
		return nil, errors.New("max_body_bytes: must not be negative")
	}
	if err := checkThresholds(f.Thresholds); err != nil {
		return nil, err
	}
	d := r.Discovery
	f.Discovery = Discovery{Interval: time.Duration(d.Interval), MaxTargets: d.MaxTargets}
	if f.Discovery.Interval == 0 {
		f.Discovery.Interval = DefaultDiscoveryInterval
	}
	if f.Discovery.Interval < time.Second {
		return nil, fmt.Errorf("discovery.interval: %s is too short (minimum 1s)", f.Discovery.Interval)
	}
	switch {
	case f.Discovery.MaxTargets == 0:
		f.Discovery.MaxTargets = DefaultMaxDiscovered
	case f.Discovery.MaxTargets < 0:
		return nil, errors.New("discovery.max_targets: must be positive")
	}
	var err error
	if f.Discovery.CredentialsFor, err = ParseHostList(d.CredentialsFor); err != nil {
		return nil, fmt.Errorf("discovery.credentials_for: %v", err)
	}
	if f.Discovery.AllowNetworks, err = ParseHostList(d.AllowNetworks); err != nil {
		return nil, fmt.Errorf("discovery.allow_networks: %v", err)
	}
	for i, n := range d.AllowNetworks {
		if !strings.Contains(n, "/") {
			if _, perr := netip.ParseAddr(strings.TrimSpace(n)); perr != nil {
				return nil, fmt.Errorf("discovery.allow_networks: entry %d %q is not an IP or CIDR", i, n)
			}
		}
	}

	seen := map[string]string{}
	dup := func(field, id string) error {
		if prev, ok := seen[id]; ok {
			return fmt.Errorf("%s: %s is already configured as %s", field, id, prev)
		}
		seen[id] = field
		return nil
	}
	for i, g := range r.Gateways {
		field := fmt.Sprintf("gateways[%d]", i)
		gw, err := g.validate(field, dir)
		if err != nil {
			return nil, err
		}
		if err := dup(field, gw.URL.String()); err != nil {
			return nil, err
		}
		f.Gateways = append(f.Gateways, gw)
	}
	for i, t := range r.Targets {
		field := fmt.Sprintf("targets[%d]", i)
		tg, err := t.validate(field, dir)
		if err != nil {
			return nil, err
		}
		if err := dup(field, tg.URL.String()); err != nil {
			return nil, err
		}
		f.Targets = append(f.Targets, tg)
	}
	if r.Prometheus != nil {
		if f.Prometheus, err = r.Prometheus.validate(dir); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func checkThresholds(t sources.Thresholds) error {
	for _, c := range []struct {
		name string
		v    float64
		max  float64 // 0 = no upper bound
	}{
		{"queue_depth", t.QueueDepth, 0}, {"kv_usage", t.KVUsage, 1}, {"ttft_p99_seconds", t.TTFTP99, 0},
		{"itl_p99_seconds", t.ITLP99, 0}, {"hit_gap", t.HitGap, 1}, {"error_rate", t.ErrorRate, 1},
		{"slo_ttft_seconds", t.SLOTTFT, 0}, {"slo_itl_seconds", t.SLOITL, 0},
	} {
		if !sources.Finite(c.v) || c.v < 0 {
			return fmt.Errorf("thresholds.%s: %v must be a non-negative number", c.name, c.v)
		}
		if c.max > 0 && c.v > c.max {
			return fmt.Errorf("thresholds.%s: %v is a ratio (0–1)", c.name, c.v)
		}
	}
	return nil
}

func (g rawGateway) validate(field, dir string) (Gateway, error) {
	u, err := MetricsURL(g.URL)
	if err != nil {
		return Gateway{}, fmt.Errorf("%s.url: %v", field, err)
	}
	out := Gateway{URL: NewURL(u), Name: g.Name, Discovery: g.Discovery == nil || *g.Discovery,
		EngineMetrics: strings.ToLower(strings.TrimSpace(g.EngineMetrics)), AllowInsecureCredentials: g.AllowInsecureCredentials}
	if out.Name, err = checkName(field, g.Name, u); err != nil {
		return Gateway{}, err
	}
	switch out.EngineMetrics {
	case "":
		out.EngineMetrics = EngineMetricsAuto
	case EngineMetricsAuto, EngineMetricsOnly, EngineMetricsOff:
	default:
		return Gateway{}, fmt.Errorf("%s.engine_metrics: %q is not one of auto, only, off", field, g.EngineMetrics)
	}
	if g.APIURL != "" {
		api, err := baseURL(g.APIURL)
		if err != nil {
			return Gateway{}, fmt.Errorf("%s.api_url: %v", field, err)
		}
		out.APIURL = api
	}
	if out.HTTP, err = checkHTTP(field, g.HTTP, dir); err != nil {
		return Gateway{}, err
	}
	for _, raw := range []string{u, out.APIURL} {
		if err := insecure(field, raw, out.HTTP, g.AllowInsecureCredentials); err != nil {
			return Gateway{}, err
		}
	}
	return out, nil
}

func (t rawTarget) validate(field, dir string) (Target, error) {
	u, err := MetricsURL(t.URL)
	if err != nil {
		return Target{}, fmt.Errorf("%s.url: %v", field, err)
	}
	out := Target{URL: NewURL(u), AllowInsecureCredentials: t.AllowInsecureCredentials}
	if out.Name, err = checkName(field, t.Name, u); err != nil {
		return Target{}, err
	}
	if strings.TrimSpace(t.Role) != "" {
		out.Role = sources.ParseRole(t.Role)
		if out.Role == sources.RoleUnknown || out.Role == sources.RoleGateway {
			return Target{}, fmt.Errorf("%s.role: %q is not one of prefill, decode, unified (gateways go under gateways:)", field, t.Role)
		}
	}
	if a := strings.TrimSpace(t.WorkerAddr); a != "" {
		k := sources.WorkerKey(a)
		if host, port, err := net.SplitHostPort(k); err != nil || host == "" || port == "" || strings.ContainsAny(k, " @") {
			return Target{}, fmt.Errorf("%s.worker_addr: %q is not host:port (the address the gateways list this worker under)", field, t.WorkerAddr)
		}
		out.WorkerAddr = k
	}
	if out.HTTP, err = checkHTTP(field, t.HTTP, dir); err != nil {
		return Target{}, err
	}
	if err := insecure(field, u, out.HTTP, t.AllowInsecureCredentials); err != nil {
		return Target{}, err
	}
	return out, nil
}

var nameOK = regexp.MustCompile(`^[\p{L}\p{N}._:@/+-]{1,64}$`)

// checkName returns the configured display name, or host:port of u.
func checkName(field, name, u string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return sources.WorkerKey(u), nil
	}
	if !nameOK.MatchString(name) {
		return "", fmt.Errorf("%s.name: %q: use up to 64 letters, digits and . _ : @ / + -", field, name)
	}
	return name, nil
}

// checkHTTP validates prometheus/common's settings and resolves relative
// file paths against dir. Its errors carry no secret values (they are
// built from field names).
func checkHTTP(field string, c pconfig.HTTPClientConfig, dir string) (HTTP, error) {
	if err := c.Validate(); err != nil {
		return HTTP{}, fmt.Errorf("%s: %v", field, err)
	}
	switch {
	case c.Authorization != nil && c.Authorization.CredentialsRef != "",
		c.BasicAuth != nil && (c.BasicAuth.UsernameRef != "" || c.BasicAuth.PasswordRef != ""),
		c.OAuth2 != nil && (c.OAuth2.ClientSecretRef != "" || c.OAuth2.ClientCertificateKeyRef != ""),
		c.TLSConfig.CARef != "" || c.TLSConfig.CertRef != "" || c.TLSConfig.KeyRef != "":
		return HTTP{}, fmt.Errorf("%s: *_ref fields need a secret manager, which pdtop does not have; use the value or a *_file", field)
	}
	if dir != "" {
		c.SetDirectory(dir)
	}
	return NewHTTP(c), nil
}

// Secrets lists every inline secret of the file, for scrubbing logs.
func (f *File) Secrets() []Secret {
	var out []Secret
	for _, g := range f.Gateways {
		out = append(out, g.HTTP.Secrets()...)
	}
	for _, t := range f.Targets {
		out = append(out, t.HTTP.Secrets()...)
	}
	if f.Prometheus != nil {
		out = append(out, f.Prometheus.HTTP.Secrets()...)
	}
	return out
}

// Files lists every file the HTTP settings read, keyed by the field that
// names it ("targets[1].tls_config.ca_file"), for the command to check.
func (f *File) Files() map[string]string {
	out := map[string]string{}
	for i, g := range f.Gateways {
		for k, v := range g.HTTP.Files() {
			out[fmt.Sprintf("gateways[%d].%s", i, k)] = v
		}
	}
	for i, t := range f.Targets {
		for k, v := range t.HTTP.Files() {
			out[fmt.Sprintf("targets[%d].%s", i, k)] = v
		}
	}
	if f.Prometheus != nil {
		for k, v := range f.Prometheus.HTTP.Files() {
			out["prometheus."+k] = v
		}
	}
	return out
}
