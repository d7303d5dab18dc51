package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sim"
)

// simChild serves the demo fleet at n workers in real time and prints its
// targets (JSON, one line); it exits when its stdin closes.
func simChild(args []string) error {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	n := fs.Int("n", 16, "workers (half prefill, half decode)")
	tick := fs.Duration("tick", 0, "simulation tick (default: the simulator's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := sim.New(sim.Config{Seed: 1, Prefill: *n / 2, Decode: *n - *n/2, Replicas: 1, Scenario: "steady", Tick: *tick})
	if err != nil {
		return err
	}
	eps, err := f.Serve("127.0.0.1")
	if err != nil {
		return err
	}
	defer f.Close()
	var targets []sources.Target
	for _, e := range eps {
		targets = append(targets, sources.Target{ID: sources.DisplayURL(e.MetricsURL), URL: e.MetricsURL,
			Name: e.Name, Role: e.Role, Origin: sources.OriginDemo})
	}
	line, err := json.Marshal(targets)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		b := make([]byte, 1)
		_, _ = os.Stdin.Read(b)
		cancel()
	}()
	start := time.Now()
	f.Run(ctx, 1)
	// How far the simulation kept up with the wall clock.
	fmt.Fprintf(os.Stderr, "   demo fleet: %s simulated in %s\n", f.Now().Round(time.Second), time.Since(start).Round(time.Second))
	return nil
}
