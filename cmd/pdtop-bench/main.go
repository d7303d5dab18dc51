// Command pdtop-bench measures what pdtop costs at fleet sizes it will
// meet: it starts the demo fleet at N workers (N/2 prefill, N/2 decode, one
// smg gateway), runs pdtop headless — the backend, the snapshot derivation
// and the whole dashboard rendered at 200x60 after every round, no
// terminal — at a 1 s refresh for a fixed time, and reports CPU-seconds
// per wall-second, peak RSS, the refresh round's duration (p50/p99) and
// the frame render time, for direct scraping and for the Prometheus
// backend (a real Prometheus scraping the same fleet every second). A
// synthetic 10,000-worker fleet, which the simulator cannot run, checks
// that the Prometheus backend stays responsive at that size, with and
// without pdtop's recording rules.
//
//	go run ./cmd/pdtop-bench                      # 16, 64, 256, 512 workers + 10,000 synthetic
//	go run ./cmd/pdtop-bench -n 256 -modes direct -duration 15m
//
// Each measured pdtop, the demo fleet and Prometheus run in their own
// processes, so the figures are pdtop's alone. Results are a Markdown
// table on stdout; progress goes to stderr.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/pdtop/pdtop/internal/promrun"
	"github.com/pdtop/pdtop/sources/promql"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "child" {
		var err error
		switch os.Args[2] {
		case "sim":
			err = simChild(os.Args[3:])
		case "synth":
			err = synth(os.Args[3:])
		case "measure":
			err = measure(os.Args[3:])
		default:
			err = fmt.Errorf("unknown child %q", os.Args[2])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pdtop-bench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pdtop-bench:", err)
		os.Exit(1)
	}
}

type opts struct {
	sizes     []int
	modes     map[string]bool
	duration  time.Duration
	warmup    time.Duration
	synthetic int
	rules     time.Duration // > 0: load pdtop's recording rules, evaluated this often
}

func run(args []string) error {
	fs := flag.NewFlagSet("pdtop-bench", flag.ContinueOnError)
	n := fs.String("n", "16,64,256,512", "fleet `sizes` (workers; half prefill, half decode)")
	modes := fs.String("modes", "direct,prometheus", "`backends` to measure: direct, prometheus")
	dur := fs.Duration("duration", time.Minute, "measured `time` per run (after the warm-up)")
	warm := fs.Duration("prom-warmup", 40*time.Second, "how long Prometheus scrapes before pdtop reads it")
	syn := fs.Int("synthetic", 10000, "`workers` of the synthetic fleet for the Prometheus backend (0: skip)")
	rules := fs.Duration("rules", 0, "with the demo fleet: load pdtop's recording rules into Prometheus, evaluated every `interval` (0: raw queries)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o := opts{modes: map[string]bool{}, duration: *dur, warmup: *warm, synthetic: *syn, rules: *rules}
	for _, s := range strings.Split(*n, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 2 || v > 1024 {
			return fmt.Errorf("-n %q: want sizes 2..1024", s)
		}
		o.sizes = append(o.sizes, v)
	}
	for _, m := range strings.Split(*modes, ",") {
		o.modes[strings.TrimSpace(m)] = true
	}
	if o.modes["prometheus"] || o.synthetic > 0 {
		if _, err := promrun.Binary(); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx := context.Background()
	fmt.Println("| backend | workers | CPU s/s | peak RSS | refresh cycle p50 / p99 | snapshot p99 | frame p50 / p99 | skipped | Prometheus CPU s/s, RSS |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, size := range o.sizes {
		if err := benchSize(ctx, self, size, o); err != nil {
			return fmt.Errorf("%d workers: %v", size, err)
		}
	}
	if o.synthetic > 0 {
		if err := benchSynthetic(ctx, self, o); err != nil {
			return fmt.Errorf("synthetic fleet: %v", err)
		}
	}
	return nil
}

// child starts this binary as a helper process and returns its first
// stdout line; the helper dies with us (Linux) or when stop is called.
func child(self string, args ...string) (line string, out *bufio.Reader, stop func(), err error) {
	cmd := exec.Command(self, append([]string{"child"}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, nil, err
	}
	promrun.KillWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return "", nil, nil, err
	}
	stop = func() {
		stdin.Close() // helpers exit when their stdin closes
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	out = bufio.NewReaderSize(stdout, 1<<20)
	line, err = out.ReadString('\n')
	if err != nil {
		stop()
		return "", nil, nil, fmt.Errorf("%s: %v", args[0], err)
	}
	return strings.TrimSpace(line), out, stop, nil
}

// measureIn runs one measurement child and decodes its result.
func measureIn(self string, args ...string) (result, error) {
	line, _, stop, err := child(self, append([]string{"measure"}, args...)...)
	if err != nil {
		return result{}, err
	}
	defer stop()
	var r result
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return r, fmt.Errorf("measure: %v (%q)", err, line)
	}
	return r, nil
}

func benchSize(ctx context.Context, self string, size int, o opts) error {
	fmt.Fprintf(os.Stderr, "== %d workers: starting the demo fleet\n", size)
	line, _, stopSim, err := child(self, "sim", "-n", strconv.Itoa(size))
	if err != nil {
		return err
	}
	defer stopSim()
	targetsFile, hostports, err := writeTargets(line)
	if err != nil {
		return err
	}
	defer os.Remove(targetsFile)
	d := o.duration.String()
	if o.modes["direct"] {
		fmt.Fprintf(os.Stderr, "   direct scraping for %s\n", d)
		r, err := measureIn(self, "-mode", "direct", "-targets", targetsFile, "-duration", d, "-workers", strconv.Itoa(size))
		if err != nil {
			return err
		}
		printRow(r, "")
	}
	if o.modes["prometheus"] {
		dir, err := os.MkdirTemp("", "pdtop-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		pc := promrun.Config{Dir: dir, Jobs: map[string][]string{"sim": hostports}}
		if o.rules > 0 {
			rules, err := promql.Rules(promql.RulesOptions{Window: time.Minute})
			if err != nil {
				return err
			}
			pc.RuleFiles, pc.EvalInterval = [][]byte{rules}, o.rules
		}
		srv, err := promrun.Start(ctx, pc)
		if err != nil {
			return err
		}
		defer srv.Stop()
		fmt.Fprintf(os.Stderr, "   Prometheus scraping every 1s (rules every %s); warming up %s\n", o.rules, o.warmup)
		time.Sleep(o.warmup)
		p0 := procCPU(srv.PID())
		fmt.Fprintf(os.Stderr, "   Prometheus backend for %s\n", d)
		r, err := measureIn(self, "-mode", "prometheus", "-url", srv.URL, "-duration", d, "-workers", strconv.Itoa(size))
		if err != nil {
			return err
		}
		if o.rules > 0 {
			r.Mode = "prometheus, rules every " + o.rules.String()
		}
		printRow(r, promFigures(srv.PID(), p0, r.Seconds+10))
		fmt.Fprintf(os.Stderr, "   server: %s\n   slowest queries: %s\n", r.ServerState, r.Slowest)
	}
	return nil
}

func benchSynthetic(ctx context.Context, self string, o opts) error {
	fmt.Fprintf(os.Stderr, "== synthetic fleet of %d workers (one endpoint, honor_labels, 15s scrapes)\n", o.synthetic)
	addr, _, stop, err := child(self, "synth", "-workers", strconv.Itoa(o.synthetic))
	if err != nil {
		return err
	}
	defer stop()
	rules, err := promql.Rules(promql.RulesOptions{Window: time.Minute})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pdtop-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := promrun.Start(ctx, promrun.Config{Dir: dir, Jobs: map[string][]string{"synthetic": {addr}},
		HonorLabels: true, ScrapeInterval: 15 * time.Second, RuleFiles: [][]byte{rules}})
	if err != nil {
		return err
	}
	defer srv.Stop()
	wait := 90 * time.Second
	fmt.Fprintf(os.Stderr, "   Prometheus warming up %s (rates need several 15s scrapes)\n", wait)
	time.Sleep(wait)
	d := o.duration.String()
	for _, ignore := range []bool{true, false} {
		label := "with recording rules"
		if ignore {
			label = "raw queries"
		}
		fmt.Fprintf(os.Stderr, "   Prometheus backend, %s, for %s\n", label, d)
		p0 := procCPU(srv.PID())
		r, err := measureIn(self, "-mode", "prometheus", "-url", srv.URL, "-duration", d,
			"-workers", strconv.Itoa(o.synthetic), "-ignore-rules="+strconv.FormatBool(ignore))
		if err != nil {
			return err
		}
		r.Mode = "prometheus, " + label
		printRow(r, promFigures(srv.PID(), p0, r.Seconds+10))
		fmt.Fprintf(os.Stderr, "   server: %s\n   slowest queries: %s\n", r.ServerState, r.Slowest)
	}
	return nil
}

func printRow(r result, prom string) {
	fmt.Printf("| %s | %d | %.3f | %.0f MB | %.0f / %.0f ms | %.1f ms | %.1f / %.1f ms | %d | %s |\n",
		r.Mode, r.Workers, r.CPUPerSec, r.MaxRSSMB, r.CycleP50ms, r.CycleP99ms, r.SnapP99ms,
		r.FrameP50ms, r.FrameP99ms, r.Skipped, prom)
	if r.HistoryP99ms > 0 {
		fmt.Fprintf(os.Stderr, "   range-query job p99 %.0f ms\n", r.HistoryP99ms)
	}
}

// writeTargets stores the sim child's targets for the direct child and
// returns their host:port list for Prometheus.
func writeTargets(line string) (file string, hostports []string, err error) {
	var eps []struct{ URL, ID string }
	if err := json.Unmarshal([]byte(line), &eps); err != nil {
		return "", nil, fmt.Errorf("sim endpoints: %v", err)
	}
	for _, e := range eps {
		hp := strings.TrimPrefix(strings.TrimSuffix(e.URL, "/metrics"), "http://")
		hostports = append(hostports, hp)
	}
	f, err := os.CreateTemp("", "pdtop-bench-targets-*.json")
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	_, err = io.WriteString(f, line)
	return f.Name(), hostports, err
}

// procCPU is a process's user+system CPU seconds from /proc (Linux).
func procCPU(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // clock ticks (USER_HZ = 100 on Linux)
}

// promFigures is the server's CPU s/s since p0 and its peak RSS.
func promFigures(pid int, p0, secs float64) string {
	cpu := (procCPU(pid) - p0) / secs
	rss := "?"
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				f := strings.Fields(l)
				if len(f) >= 2 {
					if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
						rss = fmt.Sprintf("%.0f MB", kb/1024)
					}
				}
			}
		}
	}
	return fmt.Sprintf("%.3f, %s", cpu, rss)
}
