package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	pconfig "github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/config"
	"github.com/pdtop/pdtop/sources/promql"
)

// promFlags select the Prometheus-API backend: read the fleet from a
// server that already scrapes it instead of scraping every worker. Every
// command that reads a fleet (the dashboard, and 'pdtop snapshot') takes
// them.
type promFlags struct {
	url            string
	selector       string
	instanceLabel  string
	roleLabel      string
	rows           int
	scrapeInterval time.Duration

	matchers []promql.Matcher // parsed selector
}

func (p *promFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.url, "prometheus", "", "read the fleet from this Prometheus-compatible API `URL` (Prometheus, Thanos, Mimir, VictoriaMetrics) instead of scraping it")
	fs.StringVar(&p.selector, "selector", "", "with --prometheus: label `matchers` narrowing every series, e.g. '{namespace=\"serving\"}'")
	fs.StringVar(&p.instanceLabel, "instance-label", "instance", "with --prometheus: the `label` telling workers and gateway replicas apart")
	fs.StringVar(&p.roleLabel, "role-label", "engine_type", "with --prometheus: the `label` carrying a worker's role (prefill, decode, unified)")
	fs.IntVar(&p.rows, "rows", 50, "with --prometheus: per-worker rows per role (the busiest, plus every failing worker)")
	fs.DurationVar(&p.scrapeInterval, "scrape-interval", 0, "with --prometheus: the server's scrape `interval` for the workers (default: detected)")
}

// set reports whether --prometheus was given.
func (p *promFlags) set() bool { return p.url != "" }

// validate parses the selector and checks the flags against each other;
// the error names the flag.
func (p *promFlags) validate() error {
	m, err := promql.ParseSelector(p.selector)
	if err != nil {
		return fmt.Errorf("--selector: %v", err)
	}
	p.matchers = m
	if p.selector != "" && !p.set() {
		return fmt.Errorf("--selector needs --prometheus")
	}
	if p.set() {
		if err := promql.ValidateURL(p.url); err != nil {
			return err
		}
	}
	if p.rows < 1 || p.rows > 1000 {
		return fmt.Errorf("--rows %d: want 1..1000", p.rows)
	}
	if p.scrapeInterval < 0 {
		return fmt.Errorf("--scrape-interval must not be negative")
	}
	return nil
}

// backend builds the Prometheus backend. http carries auth and TLS for
// the server (the zero value: none).
func (p *promFlags) backend(http pconfig.HTTPClientConfig, allowInsecure bool, vf viewFlags, th sources.Thresholds, logger *slog.Logger) (*promql.Backend, error) {
	return promql.New(p.url, http, promql.Options{
		Selector:                 p.matchers,
		InstanceLabel:            p.instanceLabel,
		RoleLabel:                p.roleLabel,
		Rows:                     p.rows,
		Interval:                 vf.interval,
		Window:                   vf.window,
		ScrapeInterval:           p.scrapeInterval,
		Thresholds:               th,
		Logger:                   logger,
		AllowInsecureCredentials: allowInsecure,
	})
}

// promTimeout is the default job deadline with --prometheus: queries over
// a large fleet may take longer than a refresh; the dashboard then skips
// ticks (and says so) rather than cutting them off.
const promTimeout = 10 * time.Second

// promSetup is everything the Prometheus backend needs from the flags and
// the config file (whose prometheus: block and timing apply unless a flag
// says otherwise).
type promSetup struct {
	pf            promFlags
	vf            viewFlags
	http          pconfig.HTTPClientConfig
	allowInsecure bool
	thresholds    sources.Thresholds
	secrets       []config.Secret
}

// prometheusSetup merges flags and config for the Prometheus backend and
// validates them; every error names the flag or the config field.
func prometheusSetup(fs *flag.FlagSet, pf promFlags, vf viewFlags, tf targetFlags, timing bool) (*promSetup, error) {
	if tf.any() {
		return nil, fmt.Errorf("--prometheus reads the fleet from the server: drop the --gateway/--prefill/--decode/--worker flags (or drop --prometheus to scrape them directly)")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	s := &promSetup{http: defaultHTTP()}
	if tf.config != "" {
		c, err := loadConfig(tf.config)
		if err != nil {
			return nil, err
		}
		if len(c.Targets) > 0 || len(c.Gateways) > 0 {
			return nil, fmt.Errorf("%s lists targets or gateways to scrape, but pdtop reads the fleet from a server: use a config without them with a prometheus: block, or scrape directly", tf.config)
		}
		if timing {
			if c.Interval != 0 && !set["interval"] {
				vf.interval = c.Interval
			}
			if c.Timeout != 0 && !set["timeout"] {
				vf.timeout = c.Timeout
			}
			if c.Window != 0 && !set["window"] {
				vf.window = c.Window
			}
		}
		s.thresholds, s.secrets = c.Thresholds, c.Secrets()
		if pc := c.Prometheus; pc != nil {
			if !set["prometheus"] {
				pf.url = pc.URL.Full()
			}
			if !set["selector"] && pc.Selector != "" {
				pf.selector = pc.Selector
			}
			if !set["instance-label"] && pc.InstanceLabel != "" {
				pf.instanceLabel = pc.InstanceLabel
			}
			if !set["role-label"] && pc.RoleLabel != "" {
				pf.roleLabel = pc.RoleLabel
			}
			if !set["rows"] && pc.Rows != 0 {
				pf.rows = pc.Rows
			}
			if !set["scrape-interval"] && pc.ScrapeInterval != 0 {
				pf.scrapeInterval = pc.ScrapeInterval
			}
			s.http, s.allowInsecure = pc.HTTP.Config(), pc.AllowInsecureCredentials
		}
	}
	if !pf.set() {
		return nil, fmt.Errorf("no Prometheus URL: give --prometheus URL (or prometheus.url in the config file)")
	}
	if timing && vf.timeout == 0 {
		vf.timeout = promTimeout
	}
	if err := vf.check(false); err != nil {
		return nil, err
	}
	if err := pf.validate(); err != nil {
		return nil, err
	}
	s.pf, s.vf = pf, vf
	return s, nil
}

// usesPrometheus reports whether the config file at path has a
// prometheus: block (a file that does not parse is left for the scraping
// path to report).
func usesPrometheus(path string) bool {
	if path == "" {
		return false
	}
	c, err := loadConfig(path)
	return err == nil && c.Prometheus != nil
}

// runPrometheus runs the dashboard on the Prometheus backend.
func runPrometheus(ctx context.Context, fs *flag.FlagSet, pf promFlags, vf viewFlags, tf targetFlags, stdout io.Writer) error {
	s, err := prometheusSetup(fs, pf, vf, tf, true)
	if err != nil {
		return err
	}
	return runTUI(ctx, s.vf, stdout, s.secrets, "'pdtop snapshot --prometheus URL' (same flags)", nil, func(_ context.Context, logger *slog.Logger) (sources.Backend, func(), error) {
		b, err := s.pf.backend(s.http, s.allowInsecure, s.vf, s.thresholds, logger)
		if err != nil {
			return nil, nil, err
		}
		logger.Info("pdtop started", "prometheus", sources.DisplayURL(s.pf.url), "selector", s.pf.selector,
			"interval", s.vf.interval, "window", s.vf.window)
		return b, func() {}, nil
	})
}

// prometheusSnapshot reads one snapshot from the server: the server
// already holds the window's history, so one refresh (the instant, range
// and restart queries) is enough. It fails with the server's reason when
// the server did not answer.
func prometheusSnapshot(ctx context.Context, s *promSetup) (*sources.Snapshot, error) {
	b, err := s.pf.backend(s.http, s.allowInsecure, s.vf, s.thresholds, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for _, j := range b.Round() {
		wg.Add(1)
		go func(j sources.Job) {
			defer wg.Done()
			c, cancel := context.WithTimeout(ctx, s.vf.timeout)
			defer cancel()
			j.Run(c)
		}(j)
	}
	wg.Wait()
	snap := b.Snapshot(s.vf.window)
	if srv := snap.Targets[0]; srv.Health == sources.Down {
		return nil, fmt.Errorf("%w: the Prometheus server at %s: %v", errNoTarget, srv.ID, srv.LastError)
	}
	return snap, nil
}

// runRules prints the recording rules for the Prometheus backend.
func runRules(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pdtop rules", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pf promFlags
	window := fs.Duration("window", time.Minute, "the dashboard's `window` (the rules' rate window; run pdtop with the same --window)")
	eval := fs.Duration("eval-interval", 0, "the rule group's evaluation `interval` (default: the server's global one)")
	fs.StringVar(&pf.selector, "selector", "", "the dashboard's label `matchers`; the rules keep these labels so one rule set serves every value")
	fs.StringVar(&pf.instanceLabel, "instance-label", "instance", "the `label` telling workers apart")
	fs.StringVar(&pf.roleLabel, "role-label", "engine_type", "the `label` carrying a worker's role")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: pdtop rules [flags] > pdtop-rules.yml\n\n"+
			"Prints Prometheus recording rules that precompute every pool figure of 'pdtop --prometheus',\n"+
			"so the dashboard stays cheap at 10,000 workers. Load the file with rule_files: in prometheus.yml.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := promql.ParseSelector(pf.selector)
	if err != nil {
		return fmt.Errorf("--selector: %v", err)
	}
	if *window < time.Second || *window > 15*time.Minute {
		return fmt.Errorf("--window %s: want 1s..15m", *window)
	}
	out, err := promql.Rules(promql.RulesOptions{Selector: m, InstanceLabel: pf.instanceLabel,
		RoleLabel: pf.roleLabel, Window: *window, Interval: *eval})
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
