package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/config"
	"github.com/pdtop/pdtop/sources/sim"
)

// simFlags configure the embedded demo fleet.
type simFlags struct {
	seed                      int64
	scenario, gateway         string
	prefill, decode, replicas int
	speed                     float64
}

func (s *simFlags) register(fs *flag.FlagSet) {
	fs.Int64Var(&s.seed, "seed", 1, "simulation `seed` (same seed, same fleet)")
	fs.StringVar(&s.scenario, "scenario", "cycle", "`scenario` to play: one of those below, or cycle (each in turn)")
	fs.StringVar(&s.gateway, "gateway-gen", sim.GatewaySMG, "gateway `generation` to impersonate: smg, legacy, 2026")
	fs.IntVar(&s.prefill, "prefill", 2, "prefill `workers`")
	fs.IntVar(&s.decode, "decode", 2, "decode `workers`")
	fs.IntVar(&s.replicas, "replicas", 1, "gateway `replicas`")
	fs.Float64Var(&s.speed, "speed", 1, "simulated seconds per wall-clock second")
}

// scenarioHelp lists every scenario with its one-line description, for
// the -h of the commands that take --scenario.
func scenarioHelp() string {
	var b strings.Builder
	b.WriteString("\nScenarios (--scenario NAME; the default, cycle, plays them in this order):\n")
	for _, sc := range sim.Scenarios() {
		fmt.Fprintf(&b, "  %-18s %s\n", sc.Name, sc.Description)
	}
	b.WriteString("The cycle skips replica-skew with one gateway replica (--replicas 2 plays it).\n" +
		"The default gateway, smg, exposes no predicted prefix hits (as the real one): --gateway-gen legacy\n" +
		"or 2026 shows the router's prediction beside the workers' actual hits.\n" +
		"While it runs, the footer names the scenario and ? says what to look for.\n")
	return b.String()
}

func (s *simFlags) fleet() (*sim.Fleet, error) {
	if s.speed <= 0 || s.speed > 1000 {
		return nil, fmt.Errorf("--speed %v: must be in (0, 1000]", s.speed)
	}
	sc := s.scenario
	if sc == "cycle" {
		sc = ""
	}
	if _, ok := scenarioInfo(sc); !ok && sc != "" {
		names := []string{"cycle"}
		for _, i := range sim.Scenarios() {
			names = append(names, i.Name)
		}
		return nil, fmt.Errorf("--scenario %q: no such scenario; choose one of %s ('pdtop demo -h' says what each shows)",
			s.scenario, strings.Join(names, ", "))
	}
	return sim.New(sim.Config{Seed: s.seed, Prefill: s.prefill, Decode: s.decode,
		Replicas: s.replicas, Gateway: s.gateway, Scenario: sc})
}

// demoTargets turns the fleet's endpoints into targets.
func demoTargets(eps []sim.Endpoint) []sources.Target {
	out := make([]sources.Target, 0, len(eps))
	for _, e := range eps {
		out = append(out, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL,
			Name: e.Name, Role: e.Role, Origin: sources.OriginDemo})
	}
	return out
}

// demoFleet is what the dashboard scrapes of the demo fleet: its gateway
// replicas, and the workers they list (discovered, as from a real
// gateway, every few seconds so scale-out shows quickly). The 2026 router
// has no worker list, so there the workers are the fleet's endpoints,
// followed as scenarios add and remove them.
func demoFleet(f *sim.Fleet, eps []sim.Endpoint) *fleet {
	fl := &fleet{http: map[string]targetHTTP{}, demo: true}
	fl.disc.Interval, fl.disc.MaxTargets = 5*time.Second, 1024
	discover := f.Config().Gateway != sim.Gateway2026
	for _, t := range demoTargets(eps) {
		if t.Role == sources.RoleGateway {
			fl.targets = append(fl.targets, t)
			fl.gateways = append(fl.gateways, gatewaySpec{target: t, discovery: discover, engineMetrics: config.EngineMetricsAuto})
		} else if !discover {
			fl.targets = append(fl.targets, t)
		}
	}
	// Discovered workers keep the demo's names ("prefill-0").
	fl.names = func(key string) string {
		for _, e := range f.Endpoints() {
			if sources.WorkerKey(e.MetricsURL) == key {
				return e.Name
			}
		}
		return ""
	}
	if !discover {
		fl.follow = func(ctx context.Context, set func([]sources.Target)) {
			t := time.NewTicker(2 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					set(demoTargets(f.Endpoints()))
				}
			}
		}
	}
	return fl
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pdtop demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var vf viewFlags
	var sf simFlags
	vf.register(fs)
	vf.registerRecord(fs)
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: pdtop demo [flags]\n\nRuns the dashboard on an embedded, simulated PD fleet served on loopback.\n\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), scenarioHelp())
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := vf.validate(); err != nil {
		return err
	}
	f, err := sf.fleet()
	if err != nil {
		return err
	}
	eps, err := f.Serve("127.0.0.1")
	if err != nil {
		return fmt.Errorf("demo fleet: %v", err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx, sf.speed)
	fl := demoFleet(f, eps)
	fl.notice = func() string {
		name, at := f.Scenario()
		n := fmt.Sprintf("demo: %s %s", name, fmtClock(at))
		if i, ok := scenarioInfo(name); ok {
			n += " — " + i.Description
		}
		return n
	}
	fl.help = func() (string, string) {
		name, at := f.Scenario()
		i, ok := scenarioInfo(name)
		if !ok {
			return "", ""
		}
		heading := fmt.Sprintf("Demo scenario: %s (%s in)", name, fmtClock(at))
		text := i.Description + ".\nWhat to look for: " + i.Signature + "."
		if sf.gateway == sim.GatewaySMG && strings.Contains(i.Signature, "predict") {
			text += "\nThis demo's gateway is smg, which exposes no prediction (as the real one does not): " +
				"restart with --gateway-gen legacy or 2026 to see the router's side of the cache gap."
		}
		if sf.scenario == "cycle" {
			text += "\nThe demo cycles through every scenario ('pdtop demo -h' lists them; --scenario NAME plays one)."
		}
		return heading, text
	}
	return dashboard(ctx, fl, vf, stdout)
}

// scenarioInfo is the named scenario's description.
func scenarioInfo(name string) (sim.ScenarioInfo, bool) {
	for _, i := range sim.Scenarios() {
		if i.Name == name {
			return i, true
		}
	}
	return sim.ScenarioInfo{}, false
}

// writePromConfig writes a prometheus.yml scraping every endpoint of the
// demo fleet every second, one static target each (instance = host:port,
// which is also what the gateway's worker labels normalise to).
func writePromConfig(path string, eps []sim.Endpoint) error {
	var b strings.Builder
	b.WriteString("# Written by 'pdtop sim --prometheus-config': Prometheus scraping the demo fleet.\n")
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n")
	b.WriteString("scrape_configs:\n  - job_name: pdtop-demo\n    static_configs:\n      - targets:\n")
	for _, e := range eps {
		fmt.Fprintf(&b, "          - %q  # %s (%s)\n", strings.TrimPrefix(e.BaseURL, "http://"), e.Name, e.Role)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("--prometheus-config: %v", err)
	}
	return nil
}

func runSim(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pdtop sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf simFlags
	sf.register(fs)
	listen := fs.String("listen", "127.0.0.1", "`host` to serve on (each target gets its own ephemeral port); 127.0.0.1:0 is accepted")
	promConfig := fs.String("prometheus-config", "", "also write a prometheus.yml scraping the fleet every second to this `file` (for 'pdtop --prometheus')")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: pdtop sim [flags]\n\nServes only the demo fleet's endpoints and prints them, for pdtop in another terminal or a Prometheus server.\n\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), scenarioHelp())
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	host := *listen
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	f, err := sf.fleet()
	if err != nil {
		return err
	}
	eps, err := f.Serve(host)
	if err != nil {
		return err
	}
	defer f.Close()
	var all, gws []string
	for _, e := range eps {
		fmt.Fprintf(stdout, "%-10s %-8s %s\n", e.Name, e.Role, e.MetricsURL)
		flagName := e.Role.String()
		if e.Role == sources.RoleUnified {
			flagName = "worker"
		}
		all = append(all, "--"+flagName+" "+e.MetricsURL)
		if e.Role == sources.RoleGateway {
			gws = append(gws, "--gateway "+e.MetricsURL)
		}
	}
	if f.Config().Gateway == sim.Gateway2026 {
		// The 2026 router has no worker list: every worker is named.
		fmt.Fprintf(stdout, "\nscrape it with:\n  pdtop %s\n", strings.Join(all, " "))
	} else {
		fmt.Fprintf(stdout, "\nscrape it with (the workers are discovered from the gateways):\n  pdtop %s\n", strings.Join(gws, " "))
	}
	if *promConfig != "" {
		if err := writePromConfig(*promConfig, eps); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nor through Prometheus:\n  prometheus --config.file=%s --storage.tsdb.path=$(mktemp -d) --web.listen-address=127.0.0.1:9090\n  pdtop --prometheus http://127.0.0.1:9090\n", *promConfig)
	}
	fmt.Fprint(stdout, "\nCtrl-C stops.\n")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	f.Run(ctx, sf.speed)
	return nil
}

// fmtClock formats a scenario offset as m:ss.
func fmtClock(d time.Duration) string {
	d = d.Truncate(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
