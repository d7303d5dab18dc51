package sim

import (
	"strconv"

	"github.com/pdtop/pdtop/sources"
	"github.com/prometheus/client_golang/prometheus"
)

// Route and endpoint labels the simulated clients use.
const (
	chatPath     = "/v1/chat/completions"
	chatEndpoint = "chat"
)

// gatewayCollector exposes one replica in its generation's names.
type gatewayCollector struct{ g *replica }

// Describe sends nothing (unchecked collector: series come and go with
// the registry's workers, as they do on the real gateways).
func (c *gatewayCollector) Describe(chan<- *prometheus.Desc) {}

func (c *gatewayCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.g.f
	f.mu.RLock()
	defer f.mu.RUnlock()
	e := emitter{ch: ch}
	switch f.cfg.Gateway {
	case GatewayLegacy:
		c.g.collectLegacy(e)
	case Gateway2026:
		c.g.collect2026(e)
	default:
		c.g.collectSMG(e)
	}
}

func (g *replica) initMetrics() {
	g.reg = prometheus.NewRegistry()
	g.reg.MustRegister(&gatewayCollector{g: g})
	g.handler = metricsHandler(g.reg)
}

// emitter shortens const-metric emission.
type emitter struct{ ch chan<- prometheus.Metric }

func (e emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

func (e emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func (e emitter) hist(d *prometheus.Desc, h *hist, labels ...string) {
	e.ch <- h.metric(d, labels...)
}

// visible calls fn for every worker registered with the replica by now,
// in id order.
func (g *replica) visible(fn func(w *worker, v *workerView)) {
	for id, v := range g.views {
		if v != nil && g.f.simT >= v.since {
			fn(g.f.workers[id], v)
		}
	}
}

// poolSizes counts the registered, not removed workers by role.
func (g *replica) poolSizes() (prefill, decode int) {
	g.visible(func(w *worker, v *workerView) {
		if v.removed {
			return
		}
		if w.role == sources.RolePrefill {
			prefill++
		} else {
			decode++
		}
	})
	return prefill, decode
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var legNames = [2]string{"prefill", "decode"}

func code(c int) string { return strconv.Itoa(c) }
