package schema

import dto "github.com/prometheus/client_model/go"

// Label and sample helpers shared by the adapters.

// isReplica reports whether a label only tells copies of one figure apart:
// tensor/pipeline/expert/context-parallel ranks and the process id. Never
// summed over (sglang-worker.md §2).
func isReplica(name string) bool {
	switch name {
	case "tp_rank", "pp_rank", "moe_ep_rank", "attn_cp_rank", "pid":
		return true
	}
	return false
}

// hashPair is FNV-1a over name, a separator and value.
func hashPair(n, v string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(n); i++ {
		h ^= uint64(n[i])
		h *= prime
	}
	h ^= 0xff
	h *= prime
	for i := 0; i < len(v); i++ {
		h ^= uint64(v[i])
		h *= prime
	}
	return h
}

// scalarValue reads a counter, gauge or untyped sample, whatever the
// family's declared type.
func scalarValue(s *dto.Metric) (float64, bool) {
	switch {
	case s.Gauge != nil:
		return s.Gauge.GetValue(), true
	case s.Counter != nil:
		return s.Counter.GetValue(), true
	case s.Untyped != nil:
		return s.Untyped.GetValue(), true
	}
	return 0, false
}

// lookup returns a label's value and whether the label is present.
func lookup(s *dto.Metric, name string) (string, bool) {
	for _, lp := range s.Label {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

// labelValue returns a label's value, "" when absent (Prometheus treats an
// empty value and a missing label alike).
func labelValue(s *dto.Metric, name string) string {
	v, _ := lookup(s, name)
	return v
}

// isV03 reports the v0.3 label set: `name=` instead of `model_name=`.
func isV03(s *dto.Metric) bool {
	_, hasName := lookup(s, "name")
	_, hasModel := lookup(s, "model_name")
	return hasName && !hasModel
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
