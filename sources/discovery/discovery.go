// Package discovery builds the worker list from the gateways: each
// replica is asked for its workers and their roles (GET /workers on smg
// and sglang-router 0.2.x, GET /list_workers + /get_loads on 0.1.x;
// gateway.md §10), periodically, and the union — static targets first —
// becomes the store's target list, so workers joining and leaving show as
// events.
//
// Discovered workers are untrusted input (robustness.md §6.6): anyone who
// can register a worker with a gateway chooses its URL. So a discovered
// worker is scraped only over http or https, with its path forced to
// /metrics, never with userinfo; it gets the gateway's credentials only
// when its host is on the operator's allow-list; link-local and
// cloud-metadata addresses (and loopback, unless the gateway is on
// loopback) are refused on every connection after DNS; the number of
// discovered workers is capped; and each target says which gateway listed
// it.
package discovery

import (
	"context"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/config"
	"github.com/pdtop/pdtop/sources/scrape"
)

// DefaultServingPort is where smg and the legacy sgl-router serve their
// API (and /workers) by default; their metrics listener is :29000.
const DefaultServingPort = "30000"

// Gateway is one replica to ask for workers.
type Gateway struct {
	// Target is the replica's metrics target (its ID names the replica on
	// discovered targets, its Name in statuses).
	Target sources.Target
	// APIURL is scheme://host:port of the API, or "" to try the metrics
	// host:port, then DefaultServingPort on the same host.
	APIURL string
	// HTTP are the replica's HTTP settings: used as they are to ask it,
	// stripped of credentials for the workers it lists unless their host
	// is allow-listed.
	HTTP config.HTTP
	// AllowInsecureCredentials permits the replica's credentials over
	// plain http to non-loopback hosts.
	AllowInsecureCredentials bool
}

// Store receives the target list and statuses (store.Store does).
type Store interface {
	SetTargets(now time.Time, ts []sources.Target)
	SetDiscovery(ds []sources.DiscoveryStatus)
}

// Clients receives the HTTP client of each discovered target before it
// is first scraped, and nil when it leaves (collect.Scraper does).
type Clients interface {
	SetClient(targetID string, c *scrape.Client)
}

// Options configure a Discoverer.
type Options struct {
	// Interval between passes (default 30s).
	Interval time.Duration
	// MaxTargets caps the discovered workers over all replicas (default 256).
	MaxTargets int
	// CredentialsFor lists the worker hosts that get a replica's
	// credentials; empty = none do.
	CredentialsFor config.HostList
	// AllowNetworks are exempt from the address block.
	AllowNetworks config.HostList
	// Timeout bounds each request (default scrape.DefaultTimeout).
	Timeout time.Duration
	// MaxBodyBytes caps a worker-list body and is passed to worker clients.
	MaxBodyBytes int64
	// Clock stamps statuses and events (default time.Now).
	Clock func() time.Time
	// Resolver replaces the system resolver (tests).
	Resolver *net.Resolver
	// Name, when set, gives a discovered worker its display name from its
	// host:port key; "" (or no Name) keeps host:port.
	Name func(workerKey string) string
}

// Discoverer keeps the target list in step with the gateways' worker
// lists. It is safe for concurrent use; Refresh calls are serialised.
type Discoverer struct {
	opts    Options
	static  []sources.Target
	gws     []*replica
	store   Store
	clients Clients

	pass  sync.Mutex                // one Refresh at a time
	known map[string]sources.Target // discovered targets by ID, as last applied
}

// replica is one gateway's discovery state.
type replica struct {
	Gateway
	api        *scrape.Client // the gateway's own client
	plain      *scrape.Client // for listed workers: no credentials
	trusted    *scrape.Client // for allow-listed workers: the gateway's settings
	loopbackOK bool
	auth       string // Auth of trusted

	base    string   // API base that answered last ("" = probe)
	workers []listed // last good list
	status  sources.DiscoveryStatus
}

// New returns a Discoverer for the gateways. static are the other targets
// (the gateways themselves and every configured worker): they stay in
// the list and win over a discovered worker with the same host:port. It
// fails only when a gateway's HTTP settings are invalid.
func New(static []sources.Target, gws []Gateway, st Store, cl Clients, opts Options) (*Discoverer, error) {
	if opts.Interval <= 0 {
		opts.Interval = config.DefaultDiscoveryInterval
	}
	if opts.MaxTargets <= 0 {
		opts.MaxTargets = config.DefaultMaxDiscovered
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	d := &Discoverer{opts: opts, static: append([]sources.Target(nil), static...), store: st, clients: cl,
		known: map[string]sources.Target{}}
	for _, g := range gws {
		r := &replica{Gateway: g, loopbackOK: config.IsLoopback(hostOf(g.Target.URL))}
		so := scrape.Options{Timeout: opts.Timeout, MaxBodyBytes: opts.MaxBodyBytes,
			AllowInsecureCredentials: g.AllowInsecureCredentials, Resolver: opts.Resolver}
		var err error
		if r.api, err = scrape.NewClient(g.HTTP.Config(), so); err != nil {
			return nil, err
		}
		so.DialGuard = guard(opts.AllowNetworks, r.loopbackOK)
		if r.trusted, err = scrape.NewClient(g.HTTP.Config(), so); err != nil {
			return nil, err
		}
		so.AllowInsecureCredentials = false
		if r.plain, err = scrape.NewClient(g.HTTP.WithoutCredentials().Config(), so); err != nil {
			return nil, err
		}
		r.auth = g.HTTP.Auth()
		r.status.Gateway = g.Target.Name
		d.gws = append(d.gws, r)
	}
	return d, nil
}

// Run refreshes now and then every Interval until ctx ends.
func (d *Discoverer) Run(ctx context.Context) {
	t := time.NewTicker(d.opts.Interval)
	defer t.Stop()
	for {
		d.Refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh asks every replica once (concurrently), then applies the union
// of their lists: clients first, then the target list, then statuses. A
// replica that fails keeps its previous list, so a gateway hiccup never
// makes workers "leave".
func (d *Discoverer) Refresh(ctx context.Context) []sources.DiscoveryStatus {
	d.pass.Lock()
	defer d.pass.Unlock()
	var wg sync.WaitGroup
	for _, r := range d.gws {
		wg.Add(1)
		go func(r *replica) {
			defer wg.Done()
			r.refresh(ctx, d.opts.Clock)
		}(r)
	}
	wg.Wait()
	return d.apply()
}

// apply merges the replicas' lists into targets and hands them on.
func (d *Discoverer) apply() []sources.DiscoveryStatus {
	staticKeys := map[string]int{}
	out := append([]sources.Target(nil), d.static...)
	for i, t := range out {
		if t.Role != sources.RoleGateway {
			staticKeys[t.Key()] = i
		}
	}
	type cand struct {
		l listed
		r *replica
	}
	byKey := map[string]*cand{}
	var order []string
	for _, r := range d.gws {
		r.status.Capped = 0
		for _, l := range r.workers {
			if i, ok := staticKeys[l.key]; ok {
				if out[i].Role == sources.RoleUnknown && l.role != sources.RoleUnknown {
					out[i].Role = l.role // the gateway knows the role the flags did not give
				}
				continue
			}
			if c, ok := byKey[l.key]; ok {
				if c.l.role == sources.RoleUnknown {
					c.l.role = l.role
				}
				continue
			}
			byKey[l.key] = &cand{l, r}
			order = append(order, l.key)
		}
	}
	// Over the cap: keep workers already known, then by key.
	sort.SliceStable(order, func(i, j int) bool {
		ki, kj := d.isKnown(byKey[order[i]].l.url), d.isKnown(byKey[order[j]].l.url)
		if ki != kj {
			return ki
		}
		return order[i] < order[j]
	})
	if len(order) > d.opts.MaxTargets {
		for _, k := range order[d.opts.MaxTargets:] {
			byKey[k].r.status.Capped++
		}
		order = order[:d.opts.MaxTargets]
	}
	sort.Strings(order)
	next := map[string]sources.Target{}
	for _, k := range order {
		c := byKey[k]
		t := sources.Target{ID: sources.DisplayURL(c.l.url), URL: c.l.url, Name: k, Role: c.l.role,
			Origin: sources.OriginGateway, Gateway: c.r.Target.ID}
		if d.opts.Name != nil {
			if n := d.opts.Name(k); n != "" {
				t.Name = n
			}
		}
		client := c.r.plain
		if d.opts.CredentialsFor.Match(hostOf(c.l.url)) {
			client, t.Auth = c.r.trusted, c.r.auth
		}
		if d.clients != nil {
			d.clients.SetClient(t.ID, client)
		}
		next[t.ID] = t
		out = append(out, t)
	}
	now := d.opts.Clock()
	if d.store != nil {
		d.store.SetTargets(now, out)
	}
	for id := range d.known {
		if _, still := next[id]; !still && d.clients != nil {
			d.clients.SetClient(id, nil)
		}
	}
	d.known = next
	statuses := make([]sources.DiscoveryStatus, 0, len(d.gws))
	for _, r := range d.gws {
		statuses = append(statuses, r.status)
	}
	if d.store != nil {
		d.store.SetDiscovery(statuses)
	}
	return statuses
}

func (d *Discoverer) isKnown(metricsURL string) bool {
	_, ok := d.known[sources.DisplayURL(metricsURL)]
	return ok
}

// hostOf returns the host name (or IP literal) of a URL.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// APICandidates lists the API bases to try for a gateway, in order: the
// configured api_url alone, or the metrics URL's scheme://host:port and
// then the same host on DefaultServingPort.
func APICandidates(metricsURL, apiURL string) []string {
	if apiURL != "" {
		return []string{strings.TrimRight(apiURL, "/")}
	}
	u, err := url.Parse(metricsURL)
	if err != nil || u.Host == "" {
		return nil
	}
	out := []string{u.Scheme + "://" + u.Host}
	if u.Port() != DefaultServingPort {
		out = append(out, u.Scheme+"://"+net.JoinHostPort(u.Hostname(), DefaultServingPort))
	}
	return out
}
