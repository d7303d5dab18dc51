package sim

import (
	"bytes"
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

// engineMetrics serves the replica's GET /engine_metrics as smg and
// sglang-router 0.2.x do (gateway.md §10): every registered worker that
// answers, its families merged by name, ':' rewritten to '_' in names and
// HELP, and a worker_addr label with the worker's URL.
func (g *replica) engineMetrics(rw http.ResponseWriter, _ *http.Request) {
	f := g.f
	type src struct {
		addr string
		reg  *prometheus.Registry
	}
	var srcs []src
	f.mu.RLock()
	g.registered(func(w *worker, _ *workerView) {
		if w.up(f.simT) {
			srcs = append(srcs, src{w.baseURL(), w.reg})
		}
	})
	f.mu.RUnlock()
	// Gather outside the lock: the worker collectors take it themselves.
	merged := map[string]*dto.MetricFamily{}
	for _, s := range srcs {
		fams, err := s.reg.Gather()
		if err != nil {
			continue
		}
		for _, mf := range fams {
			name := strings.ReplaceAll(mf.GetName(), ":", "_")
			out := merged[name]
			if out == nil {
				out = &dto.MetricFamily{Name: proto.String(name), Type: mf.Type,
					Help: proto.String(strings.ReplaceAll(mf.GetHelp(), ":", "_"))}
				merged[name] = out
			}
			for _, m := range mf.Metric {
				m.Label = append(m.Label, &dto.LabelPair{Name: proto.String("worker_addr"), Value: proto.String(s.addr)})
				out.Metric = append(out.Metric, m)
			}
		}
	}
	names := make([]string, 0, len(merged))
	for n := range merged {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(&b, merged[n]); err != nil {
			http.Error(rw, "encoding failed", http.StatusInternalServerError)
			return
		}
	}
	rw.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	_, _ = rw.Write(b.Bytes())
}
