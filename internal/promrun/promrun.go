// Package promrun starts a real Prometheus server (the Debian package's
// /usr/bin/prometheus, or any prometheus binary on PATH) on loopback for
// integration tests and benchmarks: it writes a prometheus.yml scraping the
// given targets, waits until the server is ready, and on Stop kills the
// process and removes its data directory. On Linux the child also dies with
// the parent (Pdeathsig), so an interrupted test never leaves a stray
// server behind.
package promrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
)

// Config describes the server to start.
type Config struct {
	// Binary is the prometheus executable (default: "prometheus" on PATH,
	// else /usr/bin/prometheus).
	Binary string
	// Dir holds the config, rule files and TSDB (e.g. t.TempDir()); Stop
	// removes what Start created in it.
	Dir string
	// Jobs are scrape jobs: job name → targets (host:port).
	Jobs map[string][]string
	// Labels are extra target labels by target (host:port), e.g. an
	// instance label other than the address.
	Labels map[string]map[string]string
	// HonorLabels keeps the labels a target exposes (instance included)
	// over the target's own: one endpoint can then carry many workers'
	// series (a synthetic fleet).
	HonorLabels bool
	// ScrapeInterval for every job (default 1s); EvalInterval for rules
	// (default ScrapeInterval).
	ScrapeInterval, EvalInterval time.Duration
	// RuleFiles are rule files' contents, written next to the config.
	RuleFiles [][]byte
	// ExtraArgs are passed to prometheus as they are.
	ExtraArgs []string
}

// Server is a running Prometheus.
type Server struct {
	URL  string // http://127.0.0.1:port
	cmd  *exec.Cmd
	dir  string
	log  *os.File
	once sync.Once
	done chan error
}

// ErrNoBinary means no prometheus executable was found.
var ErrNoBinary = errors.New("no prometheus binary (apt-get install -y prometheus)")

// Binary returns the prometheus executable to use, or ErrNoBinary.
func Binary() (string, error) {
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/prometheus"); err == nil {
		return "/usr/bin/prometheus", nil
	}
	return "", ErrNoBinary
}

// Start writes the configuration and starts the server; it returns once
// the server answers /-/ready, or an error (with the server's log tail).
func Start(ctx context.Context, cfg Config) (*Server, error) {
	bin := cfg.Binary
	if bin == "" {
		var err error
		if bin, err = Binary(); err != nil {
			return nil, err
		}
	}
	if cfg.ScrapeInterval <= 0 {
		cfg.ScrapeInterval = time.Second
	}
	if cfg.EvalInterval <= 0 {
		cfg.EvalInterval = cfg.ScrapeInterval
	}
	dir, err := os.MkdirTemp(cfg.Dir, "prometheus-")
	if err != nil {
		return nil, err
	}
	var rules []string
	for i, r := range cfg.RuleFiles {
		p := filepath.Join(dir, fmt.Sprintf("rules-%d.yml", i))
		if err := os.WriteFile(p, r, 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		rules = append(rules, p)
	}
	conf := configYAML(cfg, rules)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--storage.tsdb.retention.time=2h",
		"--web.listen-address=" + addr,
		"--log.level=warn",
	}, cfg.ExtraArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %v", bin, err)
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, dir: dir, log: logf, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		tail := s.LogTail(2000)
		s.Stop()
		return nil, fmt.Errorf("prometheus did not become ready: %v\n%s", err, tail)
	}
	return s, nil
}

func configYAML(cfg Config, rules []string) string {
	var b strings.Builder
	d := func(x time.Duration) string { return model.Duration(x.Round(time.Millisecond)).String() }
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n",
		d(cfg.ScrapeInterval), d(cfg.ScrapeInterval*9/10), d(cfg.EvalInterval))
	if len(rules) > 0 {
		b.WriteString("rule_files:\n")
		for _, r := range rules {
			fmt.Fprintf(&b, "  - %q\n", r)
		}
	}
	b.WriteString("scrape_configs:\n")
	for job, targets := range cfg.Jobs {
		fmt.Fprintf(&b, "  - job_name: %q\n", job)
		if cfg.HonorLabels {
			b.WriteString("    honor_labels: true\n")
		}
		b.WriteString("    static_configs:\n")
		for _, t := range targets {
			// %q is a valid YAML double-quoted scalar for any UTF-8 value.
			fmt.Fprintf(&b, "      - targets: [%q]\n", t)
			if ls := cfg.Labels[t]; len(ls) > 0 {
				b.WriteString("        labels:\n")
				for k, v := range ls {
					fmt.Fprintf(&b, "          %s: %q\n", k, v)
				}
			}
		}
	}
	return b.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
}

// KillWithParent makes cmd's process die with this one where the OS
// allows it (Linux), for helper processes of tests and benchmarks.
func KillWithParent(cmd *exec.Cmd) { setDeathSignal(cmd) }

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// LogTail returns the last n bytes of the server's log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(filepath.Join(s.dir, "prometheus.log"))
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Stop kills the server, waits for it and removes its directory. It is
// safe to call more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
		s.log.Close()
		os.RemoveAll(s.dir)
	})
}
