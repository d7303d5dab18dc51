package config

import (
	"fmt"
	"strings"
	"time"

	pconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources/promql"
)

// Prometheus is the prometheus: block: read the fleet from a server that
// speaks the Prometheus HTTP API instead of scraping it (the file then
// lists no targets or gateways). Flags given explicitly win.
type Prometheus struct {
	// URL is the server's base URL, e.g. http://prometheus:9090 or a
	// Thanos/Mimir query front-end with its path prefix.
	URL URL
	// Selector narrows every series, e.g. {namespace="serving"}.
	Selector string
	// InstanceLabel and RoleLabel as pdtop's --instance-label and
	// --role-label ("" = the defaults).
	InstanceLabel, RoleLabel string
	// Rows per role (0 = the default).
	Rows int
	// ScrapeInterval of the workers on the server (0 = detected).
	ScrapeInterval time.Duration
	// HTTP settings for the API (prometheus/common's HTTPClientConfig).
	HTTP HTTP
	// AllowInsecureCredentials permits credentials over plain http to a
	// non-loopback server.
	AllowInsecureCredentials bool
}

type rawPrometheus struct {
	URL                      string                   `yaml:"url"`
	Selector                 string                   `yaml:"selector"`
	InstanceLabel            string                   `yaml:"instance_label"`
	RoleLabel                string                   `yaml:"role_label"`
	Rows                     int                      `yaml:"rows"`
	ScrapeInterval           model.Duration           `yaml:"scrape_interval"`
	AllowInsecureCredentials bool                     `yaml:"allow_insecure_credentials"`
	HTTP                     pconfig.HTTPClientConfig `yaml:",inline"`
}

// UnmarshalYAML fills the HTTP defaults before decoding; unlike scrape
// targets a query server may redirect (e.g. to add a trailing slash), so
// redirects are followed — credentials never follow to another host.
func (p *rawPrometheus) UnmarshalYAML(unmarshal func(any) error) error {
	*p = rawPrometheus{HTTP: pconfig.HTTPClientConfig{EnableHTTP2: true, FollowRedirects: true}}
	type plain rawPrometheus
	return unmarshal((*plain)(p))
}

func (p *rawPrometheus) validate(dir string) (*Prometheus, error) {
	const field = "prometheus"
	if err := promql.ValidateURL(p.URL); err != nil {
		return nil, fmt.Errorf("%s.url: %s", field, strings.TrimPrefix(err.Error(), "--prometheus "))
	}
	if _, err := promql.ParseSelector(p.Selector); err != nil {
		return nil, fmt.Errorf("%s.selector: %v", field, err)
	}
	for name, l := range map[string]string{"instance_label": p.InstanceLabel, "role_label": p.RoleLabel} {
		if l != "" && !promql.ValidLabelName(l) {
			return nil, fmt.Errorf("%s.%s: %q is not a label name", field, name, l)
		}
	}
	if p.Rows < 0 || p.Rows > 1000 {
		return nil, fmt.Errorf("%s.rows: %d, want 1..1000", field, p.Rows)
	}
	if p.ScrapeInterval < 0 {
		return nil, fmt.Errorf("%s.scrape_interval: must not be negative", field)
	}
	out := &Prometheus{URL: NewURL(strings.TrimSpace(p.URL)), Selector: p.Selector, InstanceLabel: p.InstanceLabel,
		RoleLabel: p.RoleLabel, Rows: p.Rows, ScrapeInterval: time.Duration(p.ScrapeInterval),
		AllowInsecureCredentials: p.AllowInsecureCredentials}
	var err error
	if out.HTTP, err = checkHTTP(field, p.HTTP, dir); err != nil {
		return nil, err
	}
	if err := insecure(field, p.URL, out.HTTP, p.AllowInsecureCredentials); err != nil {
		return nil, err
	}
	return out, nil
}
