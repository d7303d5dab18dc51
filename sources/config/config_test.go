package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

func mustParse(t *testing.T, doc string) *File {
	t.Helper()
	f, err := Parse([]byte(doc), "/etc/pdtop")
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	return f
}

// The annotated example in docs/ is a valid file, and says what it means.
func TestExampleFileParses(t *testing.T) {
	data, err := os.ReadFile("../../docs/config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data, "/etc/pdtop")
	if err != nil {
		t.Fatalf("docs/config.example.yaml: %v", err)
	}
	if f.Interval != time.Second || f.Timeout != 900*time.Millisecond || f.Window != time.Minute || f.MaxBodyBytes != 32<<20 {
		t.Errorf("durations/cap: %+v", f)
	}
	if f.Thresholds.KVUsage != 0.9 || f.Thresholds.SLOITL != 0.05 {
		t.Errorf("thresholds: %+v", f.Thresholds)
	}
	if len(f.Gateways) != 2 || len(f.Targets) != 2 {
		t.Fatalf("gateways %d targets %d", len(f.Gateways), len(f.Targets))
	}
	g := f.Gateways[0]
	if g.Name != "gw-0" || g.APIURL != "https://gw-0.example:30000" || !g.Discovery || g.EngineMetrics != EngineMetricsAuto {
		t.Errorf("gateway 0: %+v", g)
	}
	c := g.HTTP.Config()
	if c.TLSConfig.CAFile != "/etc/pdtop/ca.pem" || c.TLSConfig.ServerName != "gw-0.example" {
		t.Errorf("tls_config: ca %q server %q", c.TLSConfig.CAFile, c.TLSConfig.ServerName)
	}
	if c.FollowRedirects || !c.EnableHTTP2 {
		t.Errorf("defaults: follow_redirects %v enable_http2 %v, want false/true", c.FollowRedirects, c.EnableHTTP2)
	}
	if g.HTTP.Auth() != "bearer" || f.Gateways[1].HTTP.Auth() != "bearer" {
		t.Errorf("auth %q %q", g.HTTP.Auth(), f.Gateways[1].HTTP.Auth())
	}
	if f.Gateways[1].URL.Full() != "https://gw-1.example:29000/metrics" || f.Gateways[1].Name != "gw-1" {
		t.Errorf("gateway 1: %+v", f.Gateways[1])
	}
	p := f.Targets[0]
	if p.Role != sources.RolePrefill || p.Name != "p1" || p.URL.Full() != "https://p1.example:30001/metrics" || p.HTTP.Auth() != "basic" {
		t.Errorf("target 0: %+v auth %q", p, p.HTTP.Auth())
	}
	d := f.Targets[1]
	if d.Role != sources.RoleDecode || d.Name != "127.0.0.1:30011" || d.HTTP.Config().Authorization.CredentialsFile != "/etc/pdtop/token.txt" {
		t.Errorf("target 1: %+v", d)
	}
	if !f.Discovery.CredentialsFor.Match("10.1.2.3") || !f.Discovery.CredentialsFor.Match("p-7.workers.svc.cluster.local") ||
		f.Discovery.CredentialsFor.Match("10.example") || f.Discovery.Interval != 30*time.Second || f.Discovery.MaxTargets != 256 {
		t.Errorf("discovery: %+v", f.Discovery)
	}
	files := f.Files()
	if files["gateways[0].tls_config.ca_file"] != "/etc/pdtop/ca.pem" || files["targets[0].basic_auth.password_file"] == "" {
		t.Errorf("files: %v", files)
	}
}

// A scrape config's HTTP block pasted from Prometheus works as is.
func TestPrometheusScrapeConfigPaste(t *testing.T) {
	f := mustParse(t, `
targets:
  - url: https://w1:30001/metrics
    role: unified
    bearer_token_file: /run/token
    tls_config:
      ca_file: /etc/ssl/ca.pem
      cert_file: client.pem
      key_file: client.key
      insecure_skip_verify: true
    proxy_url: http://proxy:3128
    follow_redirects: true
`)
	h := f.Targets[0].HTTP
	c := h.Config()
	if c.Authorization == nil || c.Authorization.CredentialsFile != "/run/token" || c.Authorization.Type != "Bearer" {
		t.Fatalf("bearer_token_file not turned into authorization: %+v", c.Authorization)
	}
	if c.TLSConfig.CertFile != "/etc/pdtop/client.pem" || c.ProxyURL.URL == nil || !c.FollowRedirects {
		t.Fatalf("tls/proxy/redirects: %+v", c)
	}
	if h.Auth() != "bearer,mTLS,no-verify" {
		t.Fatalf("Auth() = %q", h.Auth())
	}
	stripped := h.WithoutCredentials()
	if stripped.HasCredentials() || stripped.Config().TLSConfig.CAFile != "/etc/ssl/ca.pem" || stripped.Config().ProxyURL.URL == nil {
		t.Fatalf("WithoutCredentials kept credentials or lost CA/proxy: %+v", stripped.Config())
	}
}

func TestErrorsNameTheFieldOrLine(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"interval: 1s\ntargts:\n  - url: x\n", "line 2: field targts not found at the top level"},
		{"targets:\n  - url: http://w:1\n    rol: prefill\n", "line 3: field rol not found in this block"},
		{"targets:\n  - url: http://w:1\n    tls_config:\n      ca: 1\n      cafile: x\n", "line 5: field cafile not found in this block"},
		{"thresholds:\n  kv_usag: 1\n", "field kv_usag not found in thresholds"},
		{"interval: often\n", "line 1: not a duration: want a number and a unit, e.g. 500ms, 1s, 2m"},
		{"window: -1m\n", "line 1: a negative duration"},
		{"gateways:\n\t- url: gw:29000\n", "a tab? YAML indents with spaces only"},
		{"gateways:\n  - url: gw:29000\ninterval: fast\n", "line 3: not a duration"},
		{"discovery:\n  max_targets: 5\n  interval: 5\n", "line 3: not a duration"},
		{"targets: [\n", "line 1: did not find expected node content"},
		{"targets:\n  - url: ftp://w:1\n", `targets[0].url: scheme "ftp" not supported`},
		{"targets:\n  - role: decode\n", "targets[0].url: missing"},
		{"targets:\n  - url: http://u:p@w:1\n", "targets[0].url: credentials in the URL are not allowed"},
		{"targets:\n  - url: w:1\n    role: gateway\n", `targets[0].role: "gateway" is not one of prefill, decode, unified`},
		{"targets:\n  - url: w:1\n  - url: http://w:1/metrics\n", "targets[1]: http://w:1/metrics is already configured as targets[0]"},
		{"gateways:\n  - url: gw:29000\n    engine_metrics: sometimes\n", `gateways[0].engine_metrics: "sometimes" is not one of auto, only, off`},
		{"gateways:\n  - url: gw:29000\n    api_url: grpc://gw:1\n", `gateways[0].api_url: scheme "grpc" not supported`},
		{"targets:\n  - url: http://w:1\n    bearer_token: a\n    bearer_token_file: b\n", "targets[0]: at most one of bearer_token & bearer_token_file"},
		{"targets:\n  - url: http://w.example:1\n    bearer_token: abcd\n", "targets[0]: credentials would go over plain http to http://w.example:1/metrics"},
		{"targets:\n  - url: http://w:1\n    authorization:\n      credentials_ref: vault\n", "targets[0]: *_ref fields need a secret manager"},
		{"interval: 1s\ntimeout: 2s\n", "timeout: 2s is longer than interval 1s"},
		{"interval: 10ms\n", "interval: 10ms is too short"},
		{"window: 1h\n", "window: 1h0m0s is longer than the 15m"},
		{"thresholds:\n  kv_usage: 90\n", "thresholds.kv_usage: 90 is a ratio (0–1)"},
		{"thresholds:\n  queue_depth: -1\n", "thresholds.queue_depth: -1 must be a non-negative number"},
		{"discovery:\n  credentials_for: [\"10.0.0.0/33\"]\n", `discovery.credentials_for: entry 0 "10.0.0.0/33" is not a CIDR prefix`},
		{"discovery:\n  allow_networks: [\"metadata.internal\"]\n", `discovery.allow_networks: entry 0 "metadata.internal" is not an IP or CIDR`},
		{"discovery:\n  interval: 10ms\n", "discovery.interval: 10ms is too short"},
		{"targets:\n  - url: w:1\n    name: \"a\\x1b[2Jb\"\n", "targets[0].name"},
		{"targets:\n  - url: w:1\n    worker_addr: justahost\n", `targets[0].worker_addr: "justahost" is not host:port`},
	} {
		_, err := Parse([]byte(c.doc), "")
		if err == nil {
			t.Errorf("no error for\n%s", c.doc)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q, want it to contain %q\n%s", err, c.want, c.doc)
		}
		if strings.ContainsAny(err.Error(), "\x1b\r") {
			t.Errorf("error carries control characters: %q", err)
		}
	}
}

func TestCredentialsOverHTTPRules(t *testing.T) {
	// Loopback is fine, an explicit opt-in is fine, https is fine.
	mustParse(t, "targets:\n  - url: http://127.0.0.1:1\n    bearer_token: abcd\n  - url: http://localhost:2\n    bearer_token: abcd\n")
	mustParse(t, "targets:\n  - url: http://w.example:1\n    bearer_token: abcd\n    allow_insecure_credentials: true\n")
	mustParse(t, "targets:\n  - url: https://w.example:1\n    bearer_token: abcd\n")
	if a := mustParse(t, "targets:\n  - url: https://proxy:8443\n    worker_addr: http://10.0.0.1:30001\n").Targets[0].WorkerAddr; a != "10.0.0.1:30001" {
		t.Fatalf("worker_addr = %q", a)
	}
	// The gateway's API URL is checked too.
	if _, err := Parse([]byte("gateways:\n  - url: https://gw:29000\n    api_url: http://gw:30000\n    bearer_token: abcd\n"), ""); err == nil ||
		!strings.Contains(err.Error(), "gateways[0]: credentials would go over plain http to http://gw:30000") {
		t.Fatalf("api_url over http: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	f := mustParse(t, "gateways:\n  - url: gw:29000\n")
	g := f.Gateways[0]
	if !g.Discovery || g.EngineMetrics != EngineMetricsAuto || g.Name != "gw:29000" || g.URL.Full() != "http://gw:29000/metrics" {
		t.Fatalf("gateway defaults: %+v", g)
	}
	if f.Discovery.Interval != DefaultDiscoveryInterval || f.Discovery.MaxTargets != DefaultMaxDiscovered || !f.Discovery.CredentialsFor.Empty() {
		t.Fatalf("discovery defaults: %+v", f.Discovery)
	}
	if f.Interval != 0 || f.Thresholds != (sources.Thresholds{}) {
		t.Fatalf("unset fields must stay zero for flags/defaults: %+v", f)
	}
	off := mustParse(t, "gateways:\n  - url: gw:29000\n    discovery: false\n    engine_metrics: OFF\n").Gateways[0]
	if off.Discovery || off.EngineMetrics != EngineMetricsOff {
		t.Fatalf("discovery off: %+v", off)
	}
	if _, err := Parse(nil, ""); err != nil {
		t.Fatalf("empty file: %v", err)
	}
}

func TestHostList(t *testing.T) {
	h, err := ParseHostList([]string{"gw.example", "*.svc.local", "10.1.0.0/16", "fd00::1", "192.168.1.7"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"gw.example": true, "GW.example.": true, "x.gw.example": false,
		"a.svc.local": true, "a.b.svc.local": true, "svc.local": false, "evilsvc.local": false,
		"10.1.200.3": true, "10.2.0.1": false, "[fd00::1]": true, "fd00::2": false, "192.168.1.7": true,
		"::ffff:10.1.0.9": true, "": false,
	} {
		if h.Match(host) != want {
			t.Errorf("Match(%q) = %v, want %v", host, !want, want)
		}
	}
	for _, bad := range []string{"", "*", "*.", "a b", "10.0.0.0/40", "*.a/b", "h:80"} {
		if _, err := ParseHostList([]string{bad}); err == nil {
			t.Errorf("ParseHostList(%q) accepted", bad)
		}
	}
}

// Relative file paths are taken from the config file's directory.
func TestRelativeFiles(t *testing.T) {
	dir := t.TempDir()
	f, err := Parse([]byte("targets:\n  - url: https://w:1\n    tls_config:\n      ca_file: ca.pem\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Targets[0].HTTP.Config().TLSConfig.CAFile; got != filepath.Join(dir, "ca.pem") {
		t.Fatalf("ca_file = %q", got)
	}
}
