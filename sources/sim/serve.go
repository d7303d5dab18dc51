package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Endpoint is one served target of the fleet.
type Endpoint struct {
	// Name is the target's stable name: "gateway-0", "prefill-3", "decode-1".
	Name string
	// Role is the target's role (sources.RoleGateway for replicas).
	Role sources.Role
	// MetricsURL is the Prometheus endpoint, BaseURL + "/metrics".
	MetricsURL string
	// BaseURL is scheme://host:port; for workers it is also the label value
	// gateways use for them (worker=, worker_url=).
	BaseURL string
}

type server struct {
	host string
}

// endpoint is one loopback listener that can refuse (down) and answer
// again on the same port.
type endpoint struct {
	addr    string
	handler http.Handler
	srv     *http.Server
	ln      net.Listener
	open    bool
	release func() // drops the port hold of a down endpoint
}

// listen starts serving on addr (host:0 for a new port). If the port was
// taken after all (no port holding on this OS), it serves on a new port,
// as a rescheduled pod gets a new address.
func (e *endpoint) listen() error {
	ln, err := listenTCP(e.addr)
	if err != nil {
		host, _, serr := net.SplitHostPort(e.addr)
		if serr != nil {
			return err
		}
		if ln, err = listenTCP(net.JoinHostPort(host, "0")); err != nil {
			return err
		}
	}
	if e.release != nil {
		e.release()
		e.release = nil
	}
	e.addr, e.ln = ln.Addr().String(), ln
	e.srv = &http.Server{Handler: e.handler, ReadHeaderTimeout: 10 * time.Second}
	e.open = true
	go func(s *http.Server) { _ = s.Serve(ln) }(e.srv)
	return nil
}

// sync opens or closes the endpoint; a closed endpoint keeps its port.
func (e *endpoint) sync(want bool) {
	switch {
	case want && !e.open:
		_ = e.listen()
	case !want && e.open:
		if release, err := holdPort(e.addr); err == nil {
			e.release = release
		}
		e.close()
	}
}

// close stops listening now (even if Serve has not started yet) and drops
// the open connections.
func (e *endpoint) close() {
	_ = e.ln.Close()
	_ = e.srv.Close()
	e.open = false
}

// shutdown closes the endpoint for good and frees its port.
func (e *endpoint) shutdown() {
	if e.open {
		e.close()
	}
	if e.release != nil {
		e.release()
		e.release = nil
	}
}

func (e *endpoint) baseURL() string { return "http://" + e.addr }

func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// Serve starts one HTTP listener per worker and per gateway replica on
// ephemeral ports of host (e.g. "127.0.0.1"; "127.0.0.1:0" is accepted
// too) and returns their endpoints. A worker that is down (killed, warming
// up) keeps its port but refuses connections until it answers. Serve may
// be called once.
func (f *Fleet) Serve(host string) ([]Endpoint, error) {
	if h, port, err := net.SplitHostPort(host); err == nil {
		if port != "0" && port != "" {
			return nil, fmt.Errorf("sim: Serve(%q): every target needs its own port; give a host or host:0", host)
		}
		host = h
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("sim: fleet closed")
	}
	if f.srv != nil {
		return nil, errors.New("sim: fleet already served")
	}
	f.srv = &server{host: host}
	for _, g := range f.gateways {
		g.ep = &endpoint{addr: net.JoinHostPort(host, "0"), handler: g.mux()}
		if err := g.ep.listen(); err != nil {
			f.closeLocked()
			return nil, err
		}
		g.url = g.ep.baseURL()
		g.ep.sync(!g.killed)
	}
	for _, w := range f.workers {
		if err := f.serveWorker(w); err != nil {
			f.closeLocked()
			return nil, err
		}
	}
	return f.endpointsLocked(), nil
}

// serveWorker binds w's endpoint (reserving its port) and leaves it open
// only if w answers now.
func (f *Fleet) serveWorker(w *worker) error {
	if w.removed && w.killed {
		return nil
	}
	w.ep = &endpoint{addr: net.JoinHostPort(f.srv.host, "0"), handler: w.mux()}
	if err := w.ep.listen(); err != nil {
		return err
	}
	w.url = w.ep.baseURL()
	f.syncEndpoint(w, f.simT)
	return nil
}

// syncEndpoint keeps w's listener open exactly while its process answers;
// a removed worker's endpoint goes for good once it is gone.
func (f *Fleet) syncEndpoint(w *worker, t time.Duration) {
	if w.ep == nil {
		return
	}
	if w.removed && w.killed {
		w.ep.shutdown()
		return
	}
	w.ep.sync(w.up(t))
	if w.ep.open {
		w.url = w.ep.baseURL()
	}
}

// Endpoints returns the served endpoints now: gateway replicas first, then
// workers by creation order (a scale-out worker appears once added; a
// removed one disappears once its endpoint closed for good).
func (f *Fleet) Endpoints() []Endpoint {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.endpointsLocked()
}

func (f *Fleet) endpointsLocked() []Endpoint {
	var out []Endpoint
	for _, g := range f.gateways {
		if g.ep != nil {
			out = append(out, Endpoint{Name: g.name, Role: sources.RoleGateway,
				MetricsURL: g.url + "/metrics", BaseURL: g.url})
		}
	}
	for _, w := range f.workers {
		if w.ep != nil && !(w.removed && w.killed) {
			out = append(out, w.endpoint())
		}
	}
	return out
}

func (w *worker) endpoint() Endpoint {
	return Endpoint{Name: w.name, Role: w.role, MetricsURL: w.baseURL() + "/metrics", BaseURL: w.baseURL()}
}

// Close stops every listener. The fleet can still be stepped.
func (f *Fleet) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closeLocked()
	return nil
}

func (f *Fleet) closeLocked() {
	f.closed = true
	for _, g := range f.gateways {
		if g.ep != nil {
			g.ep.shutdown()
		}
	}
	for _, w := range f.workers {
		if w.ep != nil {
			w.ep.shutdown()
			w.ep = nil
		}
	}
}

func replicaName(i int) string { return "gateway-" + itoa(i) }
