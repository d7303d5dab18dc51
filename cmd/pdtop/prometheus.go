package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
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
func (p *promFlags) backend(http config.HTTPClientConfig, vf viewFlags, th sources.Thresholds, logger *slog.Logger) (*promql.Backend, error) {
	return promql.New(p.url, http, promql.Options{
		Selector:       p.matchers,
		InstanceLabel:  p.instanceLabel,
		RoleLabel:      p.roleLabel,
		Rows:           p.rows,
		Interval:       vf.interval,
		Window:         vf.window,
		ScrapeInterval: p.scrapeInterval,
		Thresholds:     th,
		Logger:         logger,
	})
}

// promTimeout is the default job deadline with --prometheus: queries over
// a large fleet may take longer than a refresh; the dashboard then skips
// ticks (and says so) rather than cutting them off.
const promTimeout = 10 * time.Second

// runPrometheusDashboard runs the TUI on the Prometheus backend.
func runPrometheusDashboard(ctx context.Context, pf promFlags, vf viewFlags, stdout io.Writer) error {
	return runUI(ctx, vf, stdout, func(logger *slog.Logger) (sources.Backend, error) {
		b, err := pf.backend(config.HTTPClientConfig{}, vf, sources.Thresholds{}, logger)
		if err != nil {
			return nil, err
		}
		logger.Info("pdtop started", "prometheus", sources.DisplayURL(pf.url), "selector", pf.selector,
			"interval", vf.interval, "window", vf.window)
		return b, nil
	})
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
