package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A prometheus: block with Prometheus-style HTTP settings pasted in.
func TestPrometheusBlock(t *testing.T) {
	f := mustParse(t, `
window: 2m
prometheus:
  url: https://thanos.example:10902/query
  selector: '{namespace="serving"}'
  role_label: role
  rows: 20
  scrape_interval: 15s
  basic_auth:
    username: pdtop
    password: hunter2-secret
  tls_config:
    ca_file: ca.pem
`)
	p := f.Prometheus
	if p == nil || p.URL.Full() != "https://thanos.example:10902/query" || p.Selector != `{namespace="serving"}` ||
		p.RoleLabel != "role" || p.Rows != 20 || p.ScrapeInterval != 15*time.Second {
		t.Fatalf("prometheus block: %+v", p)
	}
	c := p.HTTP.Config()
	if c.BasicAuth == nil || c.BasicAuth.Username != "pdtop" || !c.FollowRedirects {
		t.Errorf("http: %+v", c)
	}
	if files := f.Files(); files["prometheus.tls_config.ca_file"] != "/etc/pdtop/ca.pem" {
		t.Errorf("files %v", files)
	}
	found := false
	for _, s := range f.Secrets() {
		found = found || s.Reveal() == "hunter2-secret"
	}
	if !found {
		t.Error("the password is not among the secrets to scrub")
	}
	if s := fmt.Sprintf("%v %+v %#v", p, p, p); strings.Contains(s, "hunter2") {
		t.Errorf("printing the block shows the password: %s", s)
	}
}

func TestPrometheusBlockErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"prometheus:\n  url: prom:9090\n":                                        "prometheus.url: <invalid URL>: want an http or https URL",
		"prometheus:\n  url: http://p:9090\n  selector: 'up{a=\"b\"}'\n":         "prometheus.selector",
		"prometheus:\n  url: http://p:9090\n  role_label: 'bad-label'\n":         "prometheus.role_label",
		"prometheus:\n  url: http://p:9090\n  rows: -1\n":                        "prometheus.rows",
		"prometheus:\n  url: http://prom.example:9090\n  bearer_token: abcdef\n": "credentials would go over plain http",
		"prometheus:\n  url: http://p:9090\n  unknown_field: 1\n":                "unknown_field",
	} {
		_, err := Parse([]byte(doc), "/etc/pdtop")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "abcdef") {
			t.Errorf("error shows the token: %v", err)
		}
	}
}
