package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// urlList is a repeatable URL flag.
type urlList []string

func (u *urlList) String() string { return strings.Join(*u, ",") }
func (u *urlList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*u = append(*u, part)
		}
	}
	return nil
}

// viewFlags are shared by every command that opens the dashboard.
type viewFlags struct {
	interval time.Duration
	timeout  time.Duration
	window   time.Duration
	theme    string
	logFile  string
}

func (v *viewFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&v.interval, "interval", time.Second, "refresh `interval` (scrape every target this often)")
	fs.DurationVar(&v.timeout, "timeout", 0, "per-scrape `deadline` covering connect, headers and body (default: 90% of --interval, at least 500ms)")
	fs.DurationVar(&v.window, "window", time.Minute, "`window` for rates, quantiles and hit ratios")
	fs.StringVar(&v.theme, "theme", "", "colour theme: dark, light, high-contrast, mono (default dark; mono when NO_COLOR is set or TERM=dumb)")
	fs.StringVar(&v.logFile, "log", "", "write a log of scrape failures and events to this `file`")
}

func (v *viewFlags) validate() error {
	if v.interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s is too short (minimum 100ms)", v.interval)
	}
	if v.timeout == 0 {
		v.timeout = v.interval * 9 / 10
		if v.timeout < 500*time.Millisecond {
			v.timeout = 500 * time.Millisecond
		}
	}
	if v.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive")
	}
	if v.window < v.interval*2 {
		return fmt.Errorf("--window %s must cover at least two intervals (%s)", v.window, 2*v.interval)
	}
	if v.window > 15*time.Minute {
		return fmt.Errorf("--window %s is longer than the 15m of history pdtop keeps", v.window)
	}
	return nil
}

// targetFlags are the static target list of a live run.
type targetFlags struct {
	gateways, prefill, decode, workers urlList
}

func (t *targetFlags) register(fs *flag.FlagSet) {
	fs.Var(&t.gateways, "gateway", "gateway replica metrics `URL` (repeatable; e.g. http://gw:29000)")
	fs.Var(&t.prefill, "prefill", "prefill worker `URL` (repeatable; e.g. http://p1:30001)")
	fs.Var(&t.decode, "decode", "decode worker `URL` (repeatable)")
	fs.Var(&t.workers, "worker", "unified (non-PD) worker `URL` (repeatable)")
}

// any reports whether any target flag was given.
func (t *targetFlags) any() bool {
	return len(t.gateways)+len(t.prefill)+len(t.decode)+len(t.workers) > 0
}

// targets turns the flags into targets, rejecting bad URLs and duplicates
// with a message naming the flag.
func (t *targetFlags) targets() ([]sources.Target, error) {
	var out []sources.Target
	seen := map[string]string{}
	add := func(flagName string, role sources.Role, raw string) error {
		u, err := metricsURL(raw)
		if err != nil {
			return fmt.Errorf("--%s %q: %v", flagName, sources.DisplayURL(raw), err)
		}
		id := sources.DisplayURL(u)
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("--%s %s is already given as --%s", flagName, id, prev)
		}
		seen[id] = flagName
		out = append(out, sources.Target{ID: id, URL: u, Name: sources.WorkerKey(u), Role: role, Origin: sources.OriginFlag})
		return nil
	}
	for _, g := range []struct {
		name string
		role sources.Role
		urls urlList
	}{{"gateway", sources.RoleGateway, t.gateways}, {"prefill", sources.RolePrefill, t.prefill},
		{"decode", sources.RoleDecode, t.decode}, {"worker", sources.RoleUnified, t.workers}} {
		for _, raw := range g.urls {
			if err := add(g.name, g.role, raw); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no targets: give --gateway, --prefill, --decode or --worker URLs (or run 'pdtop demo')")
	}
	return out, nil
}

// metricsURL completes a user-given address to a metrics URL: a missing
// scheme becomes http, an empty path /metrics.
func metricsURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q not supported (use http or https)", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("no host")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}
