package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/config"
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
	record   string // --record FILE (live and demo only)
	mouse    bool
}

func (v *viewFlags) register(fs *flag.FlagSet) {
	v.registerScrape(fs)
	fs.StringVar(&v.theme, "theme", "", "colour theme: dark, light, high-contrast, mono (default dark; mono when NO_COLOR is set or TERM=dumb)")
	fs.BoolVar(&v.mouse, "mouse", false, "use the mouse: click focuses a panel or tab, the wheel scrolls (off by default so the terminal's own selection works)")
}

// registerScrape adds the flags of a command that scrapes without
// drawing (pdtop record): no --theme or --mouse.
func (v *viewFlags) registerScrape(fs *flag.FlagSet) {
	fs.DurationVar(&v.interval, "interval", time.Second, "refresh `interval` (scrape every target this often)")
	fs.DurationVar(&v.timeout, "timeout", 0, "per-scrape `deadline` covering connect, headers and body, at most --interval (default: 90% of --interval, at least 500ms)")
	fs.DurationVar(&v.window, "window", time.Minute, "`window` for rates, quantiles and hit ratios")
	fs.StringVar(&v.logFile, "log", "", "write a log of scrape failures and events to this `file`")
}

// registerRecord adds --record, for the commands that scrape.
func (v *viewFlags) registerRecord(fs *flag.FlagSet) {
	fs.StringVar(&v.record, "record", "", "also write every raw scrape to this `file` while viewing (see 'pdtop replay'; never overwritten)")
}

func (v *viewFlags) validate() error { return v.check(true) }

// check is validate; scrapes false lifts the timeout ≤ interval rule for
// the Prometheus backend, whose query job may outlast a refresh by design
// (the dashboard then skips ticks and says so).
func (v *viewFlags) check(scrapes bool) error {
	if v.interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s is too short (minimum 100ms)", v.interval)
	}
	if v.timeout == 0 {
		v.timeout = defaultTimeout(v.interval)
	}
	if v.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive")
	}
	if scrapes {
		if err := checkTimeout(v.timeout, v.interval); err != nil {
			return err
		}
	}
	if v.window < v.interval*2 {
		return fmt.Errorf("--window %s must cover at least two intervals (%s)", v.window, 2*v.interval)
	}
	if v.window > 15*time.Minute {
		return fmt.Errorf("--window %s is longer than the 15m of history pdtop keeps", v.window)
	}
	return nil
}

// defaultTimeout is 90% of the interval, at least 500ms, at most the
// interval.
func defaultTimeout(interval time.Duration) time.Duration {
	return min(max(interval*9/10, 500*time.Millisecond), interval)
}

// checkTimeout applies the config file's rule to the flags: a scrape must
// end before the next one starts, so the timeout is positive and no longer
// than the interval.
func checkTimeout(timeout, interval time.Duration) error {
	if timeout <= 0 {
		return fmt.Errorf("--timeout must be positive")
	}
	if timeout > interval {
		return fmt.Errorf("--timeout %s is longer than --interval %s (a scrape must end before the next one starts)", timeout, interval)
	}
	return nil
}

// targetFlags are the static target list of a live run.
type targetFlags struct {
	gateways, prefill, decode, workers urlList
	config                             string
	discovery                          bool
}

func (t *targetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.config, "config", "", "YAML config `file` (targets, gateways, HTTP settings, thresholds; see docs/config.example.yaml)")
	fs.BoolVar(&t.discovery, "discovery", true, "ask each gateway replica for its workers (/workers, /list_workers) and follow joins and leaves")
	fs.Var(&t.gateways, "gateway", "gateway replica metrics `URL` (repeatable; e.g. http://gw:29000; its workers are discovered)")
	fs.Var(&t.prefill, "prefill", "prefill worker `URL` (repeatable; e.g. http://p1:30001)")
	fs.Var(&t.decode, "decode", "decode worker `URL` (repeatable)")
	fs.Var(&t.workers, "worker", "unified (non-PD) worker `URL` (repeatable)")
}

// any reports whether any target flag was given.
func (t *targetFlags) any() bool {
	return len(t.gateways)+len(t.prefill)+len(t.decode)+len(t.workers) > 0
}

// addTo adds the flag targets to f, rejecting bad URLs and duplicates
// (with each other and with the config file) with a message naming the
// flag.
func (t *targetFlags) addTo(f *fleet) error {
	seen := map[string]string{}
	for _, tg := range f.targets {
		seen[tg.ID] = "in the config file"
	}
	add := func(flagName string, role sources.Role, raw string) error {
		u, err := metricsURL(raw)
		if err != nil {
			return fmt.Errorf("--%s %q: %v", flagName, sources.DisplayURL(raw), err)
		}
		id := sources.DisplayURL(u)
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("--%s %s is already given %s", flagName, id, prev)
		}
		seen[id] = "as --" + flagName
		tg := sources.Target{ID: id, URL: u, Name: sources.WorkerKey(u), Role: role, Origin: sources.OriginFlag}
		f.targets = append(f.targets, tg)
		if role == sources.RoleGateway {
			f.gateways = append(f.gateways, gatewaySpec{target: tg, discovery: true, engineMetrics: config.EngineMetricsAuto})
		}
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
				return err
			}
		}
	}
	uniqueNames(f.targets)
	if len(f.targets) == 0 {
		return fmt.Errorf("no targets: give --gateway URL (its workers are discovered), --prefill/--decode/--worker URLs, or --config FILE (or run 'pdtop demo')")
	}
	return nil
}

// uniqueNames tells apart targets that share a host:port (one proxy in
// front of several workers, by path): their rows are named host:port/path.
// Gateways still match workers by host:port (Target.Key).
func uniqueNames(ts []sources.Target) {
	n := map[string]int{}
	for _, t := range ts {
		n[t.Name]++
	}
	for i := range ts {
		if n[ts[i].Name] > 1 && ts[i].Role != sources.RoleGateway {
			if u, err := url.Parse(ts[i].URL); err == nil {
				ts[i].Name += u.EscapedPath()
			}
		}
	}
}

// metricsURL completes a user-given address to a metrics URL: a missing
// scheme becomes http, an empty path /metrics.
func metricsURL(raw string) (string, error) { return config.MetricsURL(raw) }
