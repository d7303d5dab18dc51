package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/config"
	"github.com/pdtop/pdtop/sources/discovery"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
)

// fleet is everything a run scrapes, from flags, the config file or the
// demo fleet.
type fleet struct {
	// targets are the static targets: gateway replicas and listed workers.
	targets []sources.Target
	// http holds a target's own HTTP settings, by target ID; the others
	// use the default client.
	http map[string]targetHTTP
	// gateways say which replicas to discover workers from and read
	// /engine_metrics through.
	gateways   []gatewaySpec
	disc       config.Discovery
	thresholds sources.Thresholds
	maxBody    int64
	// names gives discovered workers a display name (the demo's
	// "prefill-0"); nil = host:port.
	names func(workerKey string) string
	// follow, when set, replaces the target list while the dashboard runs
	// (the demo's 2026 router, which has no worker list).
	follow func(ctx context.Context, set func([]sources.Target))
	// secrets are scrubbed from every log line.
	secrets []config.Secret
	// notice, when set, supplies the footer's notice line (the demo
	// scenario playing).
	notice func() string
	// disco is the worker discovery backend built, nil without any
	// gateway to discover from.
	disco *discovery.Discoverer
}

// targetHTTP is one target's HTTP settings and where they were given.
type targetHTTP struct {
	field         string // "targets[2]", for errors
	http          config.HTTP
	allowInsecure bool
}

// gatewaySpec is one gateway replica's discovery and re-export settings.
type gatewaySpec struct {
	target        sources.Target
	apiURL        string
	discovery     bool
	engineMetrics string // config.EngineMetrics*
}

// backend wires scraper, store, discovery and the /engine_metrics
// fallback. start runs the background work (discovery) until ctx ends.
func (f *fleet) backend(vf viewFlags, logger *slog.Logger, clock func() time.Time) (*collect.Live, func(ctx context.Context), error) {
	if clock == nil {
		clock = time.Now
	}
	def, err := scrape.NewClient(defaultHTTP(), scrape.Options{Timeout: vf.timeout, MaxBodyBytes: f.maxBody})
	if err != nil {
		return nil, nil, err
	}
	sc := collect.New(def, collect.Options{Timeout: vf.timeout, MaxBodyBytes: f.maxBody, Clock: clock})
	for _, t := range f.targets {
		h, ok := f.http[t.ID]
		if !ok {
			continue
		}
		c, err := scrape.NewClient(h.http.Config(), scrape.Options{Timeout: vf.timeout, MaxBodyBytes: f.maxBody,
			AllowInsecureCredentials: h.allowInsecure, TargetURL: t.URL})
		if err != nil {
			return nil, nil, fmt.Errorf("%s (%s): %v", h.field, t.ID, err)
		}
		sc.SetClient(t.ID, c)
	}
	st := store.New(store.Options{Interval: vf.interval})
	st.SetTargets(clock(), f.targets)
	live := &collect.Live{Store: st, Scraper: sc, Clock: clock, Thresholds: f.thresholds, Observe: logFailures(logger)}

	re := &collect.Reexport{Scraper: sc, MaxAge: vf.interval, Clock: clock}
	var gws []discovery.Gateway
	for _, g := range f.gateways {
		switch g.engineMetrics {
		case config.EngineMetricsAuto:
			re.AddGateway(g.target.ID, g.target.Name, discovery.APICandidates(g.target.URL, g.apiURL), collect.ReexportAuto)
			live.Reexport = re
		case config.EngineMetricsOnly:
			re.AddGateway(g.target.ID, g.target.Name, discovery.APICandidates(g.target.URL, g.apiURL), collect.ReexportOnly)
			live.Reexport = re
		}
		if g.discovery {
			h := f.http[g.target.ID]
			gws = append(gws, discovery.Gateway{Target: g.target, APIURL: g.apiURL, HTTP: h.http,
				AllowInsecureCredentials: h.allowInsecure})
		}
	}
	start := func(ctx context.Context) {
		if f.follow != nil {
			go f.follow(ctx, func(ts []sources.Target) { st.SetTargets(clock(), ts) })
		}
	}
	if len(gws) == 0 {
		return live, start, nil
	}
	d, err := discovery.New(f.targets, gws, st, sc, discovery.Options{
		Interval: f.disc.Interval, MaxTargets: f.disc.MaxTargets, CredentialsFor: f.disc.CredentialsFor,
		AllowNetworks: f.disc.AllowNetworks, Timeout: vf.timeout, MaxBodyBytes: f.maxBody, Clock: clock, Name: f.names,
	})
	if err != nil {
		return nil, nil, err
	}
	f.disco = d
	return live, func(ctx context.Context) {
		start(ctx)
		go d.Run(ctx)
	}, nil
}

// fromConfig turns a parsed config file into a fleet.
func fromConfig(c *config.File) *fleet {
	f := &fleet{http: map[string]targetHTTP{}, disc: c.Discovery, thresholds: c.Thresholds,
		maxBody: c.MaxBodyBytes, secrets: c.Secrets()}
	for i, g := range c.Gateways {
		t := sources.Target{ID: g.URL.String(), URL: g.URL.Full(), Name: g.Name, Role: sources.RoleGateway,
			Origin: sources.OriginConfig, Auth: g.HTTP.Auth()}
		f.targets = append(f.targets, t)
		f.http[t.ID] = targetHTTP{field: fmt.Sprintf("gateways[%d]", i), http: g.HTTP, allowInsecure: g.AllowInsecureCredentials}
		f.gateways = append(f.gateways, gatewaySpec{target: t, apiURL: g.APIURL, discovery: g.Discovery, engineMetrics: g.EngineMetrics})
	}
	for i, w := range c.Targets {
		t := sources.Target{ID: w.URL.String(), URL: w.URL.Full(), Name: w.Name, Role: w.Role,
			Origin: sources.OriginConfig, Auth: w.HTTP.Auth(), Addr: w.WorkerAddr}
		f.targets = append(f.targets, t)
		f.http[t.ID] = targetHTTP{field: fmt.Sprintf("targets[%d]", i), http: w.HTTP, allowInsecure: w.AllowInsecureCredentials}
	}
	return f
}

// loadConfig reads and validates a config file, checking that every file
// it names can be read.
func loadConfig(path string) (*config.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %v", err)
	}
	c, err := config.Parse(data, dirOf(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for field, p := range c.Files() {
		fh, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", path, field, err)
		}
		fh.Close()
	}
	return c, nil
}
