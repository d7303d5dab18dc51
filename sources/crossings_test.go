package sources

import "testing"

// TestCrossings checks every threshold kind against a hand-made snapshot:
// values at the threshold cross, values under it and stale targets do
// not, and zero thresholds take the defaults.
func TestCrossings(t *testing.T) {
	up := func(name string, role Role) TargetStatus {
		return TargetStatus{ID: "http://" + name + "/metrics", Name: name, Role: role, Health: Up}
	}
	hist := func(p99, count float64) Quantiles {
		return Quantiles{Present: true, Form: "histogram", P99: p99, Count: count, Unit: "s"}
	}
	s := &Snapshot{
		Workers: []WorkerView{
			{TargetStatus: up("p0", RolePrefill), Readings: Readings{
				SigWaiting: {Present: true, Value: 3}, SigBootstrapQueue: {Present: true, Value: 12}},
				Hit: HitRatio{Present: true, Ratio: 0.1, Total: 100}},
			{TargetStatus: up("d0", RoleDecode), Readings: Readings{SigKVUsage: {Present: true, Value: 0.9}},
				Dists: map[Signal]Quantiles{SigITL: hist(0.2, 10), SigTTFT: hist(9, 0)}},
			{TargetStatus: TargetStatus{Name: "d1", Role: RoleDecode, Health: Stale},
				Readings: Readings{SigKVUsage: {Present: true, Value: 0.99}}},
		},
		Gateways: []GatewayView{{TargetStatus: up("gw", RoleGateway),
			Predicted: HitRatio{Present: true, Ratio: 0.6, Total: 50},
			Responses: map[string]Reading{"2xx": {Present: true, Value: 90}, "429": {Present: true, Value: 10}}}},
		Prefill: PoolView{Workers: 1, Hit: HitRatio{Present: true, Ratio: 0.3, Total: 100}},
	}
	got := map[string]Crossing{}
	for _, c := range s.Crossings() {
		got[c.Name+" "+c.What] = c
	}
	want := map[string]float64{"p0 queue": 12, "d0 KV usage": 0.9, "d0 ITL p99": 0.2, "gw hit gap": 0.3, "gw error rate": 0.1}
	if len(got) != len(want) {
		t.Fatalf("crossings = %+v, want %v", got, want)
	}
	for k, v := range want {
		c, ok := got[k]
		if !ok || c.Value < v-1e-9 || c.Value > v+1e-9 {
			t.Errorf("%s: %+v, want value %v", k, c, v)
		}
	}
	if c := got["p0 queue"]; c.Signal != SigBootstrapQueue || c.Threshold != 10 {
		t.Errorf("queue crossing names the wrong queue or threshold: %+v", c)
	}
	if gap, ok := s.WorkerHitGap(&s.Workers[0]); !ok || gap < 0.5-1e-9 || gap > 0.5+1e-9 {
		t.Errorf("worker gap = %v %v, want 0.5", gap, ok)
	}
}
