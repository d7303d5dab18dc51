package panels

import (
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/themes"
)

// downGatewaySnapshot is discovery mode with the only gateway refusing
// connections: no worker was ever listed.
func downGatewaySnapshot() *sources.Snapshot {
	refused := &sources.ScrapeError{Class: sources.ErrRefused, Message: "connection refused by 127.0.0.1:1"}
	gw := sources.TargetStatus{ID: "http://127.0.0.1:1/metrics", Name: "127.0.0.1:1", Role: sources.RoleGateway,
		Origin: sources.OriginFlag, Health: sources.Down, LastError: refused}
	return &sources.Snapshot{Time: sampleTime, Window: time.Minute, Interval: time.Second,
		Targets:   []sources.TargetStatus{gw},
		Gateways:  []sources.GatewayView{{TargetStatus: gw}},
		Fleet:     sources.Fleet{Targets: 1},
		Discovery: []sources.DiscoveryStatus{{Gateway: "127.0.0.1:1", Err: refused, Time: sampleTime}}}
}

// A down gateway in discovery mode is not an empty fleet: every panel
// that would say "no … workers in this fleet", and the capacity view, say
// why no worker was found, at a width where the reason wraps.
func TestDownGatewayIsNotAnEmptyFleet(t *testing.T) {
	st := themes.NewStyles(themes.Mono())
	s := downGatewaySnapshot()
	flat := func(v string) string {
		var b []string
		for _, l := range strings.Split(v, "\n") {
			b = append(b, strings.Trim(l, " ┃│╭╮╰╯┏┓┗┛━─"))
		}
		return strings.Join(strings.Fields(strings.Join(b, " ")), " ")
	}
	const want = "no workers discovered: gateway 127.0.0.1:1 DOWN (refused) — see t"
	for _, id := range []ID{PrefillQueue, KVTransfer, DecodeAdmission} {
		p := New(id, st)
		p.SetSnapshot(s)
		p.SetSize(60, 14)
		if v := p.View(); !strings.Contains(flat(v), want) || strings.Contains(v, "in this fleet") {
			t.Errorf("%s lacks %q:\n%s", p.Title(), want, v)
		}
	}
	if v := CapacityView(s, st, 100, 12); !strings.Contains(v, want) {
		t.Errorf("capacity view lacks %q:\n%s", want, v)
	}
	// Printed for a ticket: no key to press.
	if v := Print(PrefillQueue, s, st, 100); !strings.Contains(v, "gateway 127.0.0.1:1 DOWN (refused)") || strings.Contains(v, "see t") {
		t.Errorf("printed prefill panel:\n%s", v)
	}
	// A gateway that answers but lists nobody says so.
	s.Targets[0].Health, s.Targets[0].LastError = sources.Up, nil
	s.Gateways[0].TargetStatus = s.Targets[0]
	s.Discovery[0] = sources.DiscoveryStatus{Gateway: "127.0.0.1:1", Shape: "smg /workers", Rejected: 2, LastSuccess: sampleTime}
	if got := discoveryWhy(s); got != "gateway 127.0.0.1:1 lists no workers (2 rejected)" {
		t.Errorf("empty worker list: %q", got)
	}
	// Without discovery an empty pool is just that.
	s.Discovery = nil
	p := New(PrefillQueue, st)
	p.SetSnapshot(s)
	p.SetSize(60, 14)
	if v := p.View(); !strings.Contains(v, "no prefill workers in this fleet") {
		t.Errorf("static fleet:\n%s", v)
	}
}

// A worker that answers with another exporter's metrics is NOT SGLANG in
// its row and in the summary, never counted up.
func TestNotSGLangWorkerShown(t *testing.T) {
	st := themes.NewStyles(themes.Mono())
	ts := sources.TargetStatus{ID: "http://127.0.0.1:9100/metrics", Name: "127.0.0.1:9100", Role: sources.RolePrefill,
		Origin: sources.OriginFlag, Health: sources.Down,
		LastError: &sources.ScrapeError{Class: sources.ErrNoMetrics, Message: "no known SGLang or gateway metrics at this URL — wrong port or path?"}}
	s := &sources.Snapshot{Time: sampleTime, Window: time.Minute, Interval: time.Second,
		Targets: []sources.TargetStatus{ts}, Workers: []sources.WorkerView{{TargetStatus: ts}},
		Prefill: sources.PoolView{Role: sources.RolePrefill, Workers: 1}, Fleet: sources.Fleet{Targets: 1}}
	if got := Summary(s, st, 120, SummaryState{Label: "snapshot"}); !strings.Contains(got, "0/1 up (1 NOT SGLANG)") {
		t.Errorf("summary: %q", got)
	}
	p := New(PrefillQueue, st)
	p.SetSnapshot(s)
	p.SetSize(80, 12)
	row := ""
	for _, l := range strings.Split(p.View(), "\n") {
		if strings.Contains(l, "127.0.0.1:9100") {
			row = l
		}
	}
	if !strings.Contains(row, "NOT SGLANG") {
		t.Errorf("worker row %q lacks NOT SGLANG", row)
	}
}
