package panels

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// targetsSnapshot has a target in every state the view distinguishes.
func targetsSnapshot() *sources.Snapshot {
	ms := time.Millisecond
	s := &sources.Snapshot{Time: sampleTime, Window: time.Minute, Interval: time.Second}
	s.Targets = []sources.TargetStatus{
		{ID: "http://gw-0:29000/metrics", Name: "gw-0", Role: sources.RoleGateway, Origin: sources.OriginConfig,
			Health: sources.Up, Duration: 4 * ms, BytesWire: 3100, BytesBody: 21000, Series: 46, Skipped: 6,
			Generation: "smg gateway", Engine: "smg", Auth: "bearer"},
		{ID: "http://gw-1:29000/metrics", Name: "gw-1", Role: sources.RoleGateway, Origin: sources.OriginConfig,
			Health: sources.Down, Duration: 2 * ms,
			LastError: &sources.ScrapeError{Class: sources.ErrAuth, Status: 401, Message: "auth failed — check credentials (HTTP 401)"},
			Auth:      "bearer"},
		{ID: "http://10.0.0.1:30001/metrics", Name: "10.0.0.1:30001", Role: sources.RolePrefill, Origin: sources.OriginGateway,
			Gateway: "gw-0", Health: sources.Up, Duration: 7 * ms, BytesWire: 142000, BytesBody: 142000, Series: 49,
			Skipped: 39, Problems: 2, Generation: "sglang worker", Engine: "sglang", Restarts: 1,
			ProblemSamples: []sources.ParseProblem{{Line: 412, Message: "expected a float value", Excerpt: `sglang:num_queue_reqs{model_name="m\x1b]0;pwned\x07"} true`}}},
		{ID: "http://10.0.0.2:30001/metrics", Name: "10.0.0.2:30001", Role: sources.RolePrefill, Origin: sources.OriginGateway,
			Gateway: "gw-0", Health: sources.Stale, Age: 12 * time.Second, Duration: 900 * ms, Series: 49, Skipped: 39,
			Generation: "sglang worker", Engine: "sglang",
			LastError: &sources.ScrapeError{Class: sources.ErrTimeout, Message: "timed out after 900ms reading the body (64 KiB so far)"}},
		{ID: "http://10.0.1.1:30011/metrics", Name: "10.0.1.1:30011", Role: sources.RoleDecode, Origin: sources.OriginGateway,
			Gateway: "gw-0", Health: sources.Up, Duration: 11 * ms, Series: 40, Generation: "sglang worker", Engine: "sglang",
			Via:         "gw-0 /engine_metrics",
			DirectError: &sources.ScrapeError{Class: sources.ErrRefused, Message: "connection refused by 10.0.1.1:30011"},
			Warnings:    []string{"figures read through the gateway's /engine_metrics"}},
		{ID: "https://d2:30011/metrics", Name: "d2", Role: sources.RoleDecode, Origin: sources.OriginFlag,
			Health: sources.Down, LastError: &sources.ScrapeError{Class: sources.ErrTLS, Message: "TLS: certificate signed by an unknown authority (set tls_config.ca_file)"}},
		{ID: "http://d3:30011/metrics", Name: "d3", Role: sources.RoleDecode, Origin: sources.OriginFlag,
			Health: sources.Up, Slow: true, Duration: 950 * ms, Series: 40, Generation: "sglang worker",
			Warnings: []string{"no Content-Type (parsed as text 0.0.4)"}},
		{ID: "http://169.254.169.254:80/metrics", Name: "169.254.169.254:80", Role: sources.RoleDecode, Origin: sources.OriginGateway,
			Gateway: "gw-0", Health: sources.Down, LastError: &sources.ScrapeError{Class: sources.ErrConfig,
				Message: "blocked: discovered worker at 169.254.169.254 is link-local (cloud metadata lives there) (allow it with discovery.allow_networks)"}},
		{ID: "http://u:30001/metrics", Name: "u", Role: sources.RoleUnified, Origin: sources.OriginConfig, Health: sources.Pending},
	}
	s.Events = []sources.Event{
		{Time: sampleTime.Add(-4 * time.Minute), Name: "prefill-1", Kind: "restart", Detail: "new scheduler pid 4242"},
		{Time: sampleTime.Add(-90 * time.Second), Name: "10.0.1.1:30011", Kind: "joined", Detail: "decode from gateway"},
		{Time: sampleTime.Add(-60 * time.Second), Name: "10.0.0.9:30001", Kind: "left", Detail: "prefill"},
		{Time: sampleTime.Add(-12 * time.Second), Name: "10.0.0.2:30001", Kind: "stale", Detail: "timeout: timed out after 900ms"},
	}
	s.Discovery = []sources.DiscoveryStatus{
		{Gateway: "gw-0", API: "http://gw-0:30000/workers", Shape: "smg /workers", Workers: 5, Rejected: 1, Capped: 0,
			LastSuccess: sampleTime, Notes: []string{"rejected gRPC worker «grpc://10.0.0.6:50051» (no HTTP metrics URL)"}},
		{Gateway: "gw-1", Err: &sources.ScrapeError{Class: sources.ErrAuth, Status: 401,
			Message: "http://gw-1:29000: auth failed — check credentials (HTTP 401)"}},
	}
	return s
}

func TestGoldenTargets(t *testing.T) {
	p := NewTargets(themes.Default())
	p.SetSnapshot(targetsSnapshot())
	p.SetFocused(true)
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {200, 60}} {
		p.SetSize(sz[0], sz[1])
		golden(t, "targets_"+itoa(sz[0])+"x"+itoa(sz[1]), p.View())
	}
	if p.Title() != "Targets" || TargetsView.String() != "Targets" || p.ID() != TargetsView {
		t.Fatalf("title %q / %q, id %v", p.Title(), TargetsView.String(), p.ID())
	}
}

// What the view must say, whatever the layout: every error class and its
// message, the origin of discovered targets, the re-export path, the
// parse problem with its line and a harmless excerpt.
func TestTargetsViewContent(t *testing.T) {
	p := NewTargets(themes.Default())
	p.SetSnapshot(targetsSnapshot())
	p.SetSize(200, 60)
	v := p.View()
	for _, want := range []string{
		"auth 401", "timeout", "STALE 10s", "tls", "DOWN", "config", "SLOW", "pending", "up via gw",
		"gw gw-0", "smg gateway", "sglang worker", "3.1k/21k", "142k", "bearer",
		"auth failed — check credentials (HTTP 401)",
		"figures read through gw-0 /engine_metrics (direct scrape: refused: connection refused by 10.0.1.1:30011)",
		"2 unusable lines, first at line 412: expected a float value",
		"blocked: discovered worker at 169.254.169.254 is link-local",
		"worker list gw-0: 5 workers (smg /workers), 1 rejected from http://gw-0:30000/workers",
		"rejected gRPC worker «grpc://10.0.0.6:50051»",
		"worker list gw-1: auth",
		"no Content-Type (parsed as text 0.0.4)",
		"joined", "left", "decode from gateway",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("targets view lacks %q:\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "\x1b\x07") {
		t.Errorf("raw control characters on screen:\n%q", v)
	}
}

func TestTargetsExactSizeEverywhere(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	p := NewTargets(themes.Default())
	snaps := invariantSnapshots()
	snaps["targets"] = targetsSnapshot()
	sz := sizes()
	if testing.Short() {
		sz = sz[:len(sz)/4]
	}
	for name, snap := range snaps {
		for i, s := range sz {
			p.SetFocused(i%2 == 0)
			p.SetSize(s[0], s[1])
			p.SetSnapshot(snap)
			v := p.View()
			checkBlock(t, name+"/targets/"+itoa(s[0])+"x"+itoa(s[1]), v, s[0], s[1])
			if strings.Contains(v, "render error") {
				t.Fatalf("%s at %v: %s", name, s, v)
			}
		}
	}
}
