package panels

import (
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// promSnapshot is the Prometheus backend's snapshot of a fleet with no
// worker: only the server's target, in the given health.
func promSnapshot(h sources.Health, err *sources.ScrapeError, qs sources.QueryServer) *sources.Snapshot {
	srv := sources.TargetStatus{ID: "http://127.0.0.1:1", Name: "prometheus", Role: sources.RoleUnknown,
		Origin: sources.OriginFlag, Health: h, LastError: err, Engine: "prometheus", Generation: "Prometheus API"}
	if qs.Target == "" {
		qs.Target, qs.Host, qs.Metric = "prometheus", "127.0.0.1:1", "sglang:num_running_reqs"
	}
	return &sources.Snapshot{Time: sampleTime, Window: time.Minute, Interval: time.Second,
		Targets: []sources.TargetStatus{srv}, Fleet: sources.Fleet{Targets: 1}, QueryServer: &qs}
}

// flatView is a panel's text without borders, words joined by one space
// (the message wraps at narrow widths).
func flatView(v string) string {
	var b []string
	for _, l := range strings.Split(v, "\n") {
		b = append(b, strings.Trim(l, " ┃│╭╮╰╯┏┓┗┛━─"))
	}
	return strings.Join(strings.Fields(strings.Join(b, " ")), " ")
}

// With the Prometheus backend a dead server, a selector that matches
// nothing and a server with no SGLang series each say so in every panel
// that would read "no … workers in this fleet", and in the capacity view.
func TestQueryServerEmptyFleetSaysWhy(t *testing.T) {
	st := themes.NewStyles(themes.Mono())
	refused := &sources.ScrapeError{Class: sources.ErrRefused, Message: "connection refused by 127.0.0.1:1"}
	for _, c := range []struct {
		name string
		s    *sources.Snapshot
		want string
		seeT bool
	}{
		{"refused", promSnapshot(sources.Down, refused, sources.QueryServer{}),
			"no workers: Prometheus server 127.0.0.1:1 DOWN (refused)", true},
		{"selector", promSnapshot(sources.Up, nil, sources.QueryServer{Target: "prometheus", Host: "127.0.0.1:9292",
			Selector: `{job="nope"}`, Metric: "sglang:num_running_reqs", Probed: true, Unselected: 5}),
			`no workers: no series match --selector {job="nope"} on the server (5 workers have sglang:num_running_reqs without it)`, false},
		{"nothing", promSnapshot(sources.Up, nil, sources.QueryServer{Target: "prometheus", Host: "127.0.0.1:9292",
			Metric: "sglang:num_running_reqs", Probed: true}),
			"no workers: the server has no SGLang worker series (sglang:num_running_reqs) — is it scraping the workers?", false},
		{"pending", promSnapshot(sources.Pending, nil, sources.QueryServer{}),
			"no workers: waiting for Prometheus server 127.0.0.1:1", false},
	} {
		for _, id := range []ID{PrefillQueue, KVTransfer, DecodeAdmission, Cache} {
			p := New(id, st)
			p.SetSnapshot(c.s)
			p.SetSize(70, 14)
			v := flatView(p.View())
			if !strings.Contains(v, c.want) || strings.Contains(v, "in this fleet") || strings.Contains(v, "see t") != c.seeT {
				t.Errorf("%s: %s lacks %q (see t: %v):\n%s", c.name, p.Title(), c.want, c.seeT, p.View())
			}
		}
		if v := flatView(CapacityView(c.s, st, 100, 12)); !strings.Contains(v, c.want) {
			t.Errorf("%s: capacity view lacks %q:\n%s", c.name, c.want, v)
		}
	}
	// Printed for a ticket: no key to press.
	s := promSnapshot(sources.Down, refused, sources.QueryServer{})
	if v := Print(PrefillQueue, s, st, 100); !strings.Contains(v, "Prometheus server 127.0.0.1:1 DOWN (refused)") || strings.Contains(v, "see t") {
		t.Errorf("printed prefill panel:\n%s", v)
	}
	// The server's pools count workers that have no rows yet: no excuse.
	s = promSnapshot(sources.Up, nil, sources.QueryServer{Probed: true})
	s.Decode.Workers = 2
	if why, _ := queryServerWhy(s); why != "" {
		t.Errorf("workers in the pools: %q", why)
	}
	// Direct scraping: no query server, no excuse.
	s.QueryServer = nil
	if why, _ := queryServerWhy(s); why != "" {
		t.Errorf("direct: %q", why)
	}
}
