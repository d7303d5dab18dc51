package store

import (
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

func gateway(id string) sources.Target {
	return sources.Target{ID: id, URL: id, Name: sources.WorkerKey(id), Role: sources.RoleGateway, Origin: sources.OriginFlag}
}

func gwObs(points ...sources.Point) *sources.Observation {
	return &sources.Observation{Engine: "smg", Generation: "smg gateway", Points: points,
		Sources: map[sources.Signal]string{}}
}

func kp(sig sources.Signal, key string, v float64) sources.Point {
	return sources.Point{Signal: sig, Key: key, Value: v}
}

// Two replicas, three prefill workers: gateway-a marks p1 unhealthy with an
// open breaker while gateway-b says healthy/closed; gateway-b does not list
// p2 at all; p3 is seen alike by both (agreement is not flagged).
func TestReplicasDisagreeAboutAWorker(t *testing.T) {
	const (
		ga = "http://gw-a:29000/metrics"
		gb = "http://gw-b:29000/metrics"
		p1 = "http://10.0.0.1:30001/metrics"
		p2 = "http://10.0.0.2:30001/metrics"
		p3 = "http://10.0.0.3:30001/metrics"
	)
	s := newStore(gateway(ga), gateway(gb), worker(p1, sources.RolePrefill), worker(p2, sources.RolePrefill), worker(p3, sources.RolePrefill))
	k1, k2, k3 := "10.0.0.1:30001", "10.0.0.2:30001", "10.0.0.3:30001"
	for sec := 0.0; sec < 3; sec++ {
		s.Ingest(ok(ga, sec, gwObs(
			kp(sources.SigGWWorkerHealth, k1, 0), kp(sources.SigGWWorkerCB, k1, 1), kp(sources.SigGWWorkerInFlight, k1, 0),
			kp(sources.SigGWWorkerHealth, k2, 1), kp(sources.SigGWWorkerCB, k2, 0), kp(sources.SigGWWorkerInFlight, k2, 5),
			kp(sources.SigGWWorkerHealth, k3, 1), kp(sources.SigGWWorkerCB, k3, 0), kp(sources.SigGWWorkerInFlight, k3, 5))))
		s.Ingest(ok(gb, sec, gwObs(
			kp(sources.SigGWWorkerHealth, k1, 1), kp(sources.SigGWWorkerCB, k1, 0), kp(sources.SigGWWorkerInFlight, k1, 2),
			kp(sources.SigGWWorkerHealth, k3, 1), kp(sources.SigGWWorkerCB, k3, 0), kp(sources.SigGWWorkerInFlight, k3, 2))))
		for _, w := range []string{p1, p2, p3} {
			s.Ingest(ok(w, sec, obs(pt(sources.SigWaiting, 0))))
		}
	}
	snap := s.Snapshot(at(2), time.Minute)
	got := map[string]string{}
	for _, w := range snap.Workers {
		got[w.Name] = w.Disagree
	}
	for _, want := range []string{"gw-a:29000 unhealthy CB open, gw-b:29000 ok"} {
		if !strings.Contains(got[k1], want) {
			t.Errorf("%s: Disagree = %q, want it to contain %q", k1, got[k1], want)
		}
	}
	if !strings.Contains(got[k2], "not listed by gw-b:29000") {
		t.Errorf("%s: Disagree = %q", k2, got[k2])
	}
	if got[k3] != "" {
		t.Errorf("%s: replicas agree, Disagree = %q", k3, got[k3])
	}
}

// In-flight views: each replica's share of its own load is compared, so a
// 3:1 load balancer alone is not a disagreement, but one replica sending
// nothing to a worker that gets most of the other's load is.
func TestInFlightSkewIsRelative(t *testing.T) {
	const (
		ga = "http://gw-a:29000/metrics"
		gb = "http://gw-b:29000/metrics"
		d1 = "http://10.0.1.1:30011/metrics"
		d2 = "http://10.0.1.2:30011/metrics"
	)
	run := func(a1, a2, b1, b2 float64) map[string]string {
		s := newStore(gateway(ga), gateway(gb), worker(d1, sources.RoleDecode), worker(d2, sources.RoleDecode))
		s.Ingest(ok(ga, 0, gwObs(kp(sources.SigGWWorkerInFlight, "10.0.1.1:30011", a1), kp(sources.SigGWWorkerInFlight, "10.0.1.2:30011", a2))))
		s.Ingest(ok(gb, 0, gwObs(kp(sources.SigGWWorkerInFlight, "10.0.1.1:30011", b1), kp(sources.SigGWWorkerInFlight, "10.0.1.2:30011", b2))))
		out := map[string]string{}
		for _, w := range s.Snapshot(at(0), time.Minute).Workers {
			out[w.Name] = w.Disagree
		}
		return out
	}
	if got := run(30, 30, 10, 10); got["10.0.1.1:30011"] != "" || got["10.0.1.2:30011"] != "" {
		t.Errorf("3:1 traffic split flagged as disagreement: %v", got)
	}
	got := run(27, 3, 0, 12)
	if !strings.Contains(got["10.0.1.1:30011"], "in-flight skew: gw-a:29000 27 (90%), gw-b:29000 0 (0%)") {
		t.Errorf("skew not flagged: %v", got)
	}
	if got := run(2, 1, 0, 3); got["10.0.1.1:30011"] != "" {
		t.Errorf("too little load to judge, flagged anyway: %v", got)
	}
}
