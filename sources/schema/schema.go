// Package schema is the only place in pdtop that knows metric names. It
// recognises what a scraped body is (an SGLang worker, or one of three
// gateway generations) and maps its raw families to canonical signals
// (sources.Signal), one adapter per generation, each a table from signal to
// an ordered list of accepted names, accepted types and label rules.
//
// A signal the body does not expose is absent from the Observation, never
// zero; Observation.Sources names the raw family that fed each signal.
package schema

import (
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/pdtop/pdtop/sources"
)

// Generations (Observation.Generation) recognised by Map.
const (
	GenSGLangWorker = "sglang worker"       // an SGLang worker's /metrics (`sglang:*`)
	GenSMG          = "smg gateway"         // SMG, sglang-router ≥ 0.3.0 (`smg_*`)
	GenRouterLegacy = "sgl-router (legacy)" // sglang-router ≤ 0.2.4 (`sgl_router_*`)
	GenRouter2026   = "sgl-router (2026)"   // experimental sgl-router (`sgl_router_*`, new labels)
)

// Engines (Observation.Engine) recognised by Map.
const (
	EngineSGLang = "sglang"     // SGLang worker
	EngineSMG    = "smg"        // SMG gateway
	EngineRouter = "sgl-router" // legacy or 2026 sgl-router
)

// wanted holds every family name any adapter may read, in every spelling,
// plus `_created` companions and fingerprint families.
var wanted = buildWanted()

func buildWanted() map[string]bool {
	w := make(map[string]bool, 512)
	add := func(n string) {
		w[n] = true
		// Python prometheus_client emits <name>_created gauge families; a
		// counter's family drops its _total first.
		w[n+"_created"] = true
		if base, ok := strings.CutSuffix(n, "_total"); ok {
			w[base+"_created"] = true
		}
	}
	for _, ad := range []*adapter{&workerAdapter, &smgAdapter, &legacyAdapter, &router2026Adapter} {
		for _, r := range ad.rules {
			for _, a := range r.aliases {
				for _, n := range a.names {
					add(n)
				}
			}
		}
	}
	for _, as := range [][]alias{pidFamilies, startupConst, startupPhases} {
		for _, a := range as {
			for _, n := range a.names {
				add(n)
			}
		}
	}
	for n := range router2026Markers {
		add(n)
	}
	for n := range legacyMarkers {
		add(n)
	}
	for _, n := range router2026KV {
		add(n)
	}
	add("sgl_router_requests_total")
	return w
}

// Wanted reports whether a family (name exactly as exposed, e.g.
// "sglang:num_running_reqs", "sglang_num_running_reqs",
// "smg_worker_health", "sglang:prompt_tokens_created") may be needed by any
// adapter, including the families used for fingerprinting. It is one map
// lookup, meant for the parser's per-family pre-filter. Fingerprinting by
// prefix ("any smg_ family") uses Map's declared list, not Wanted.
func Wanted(name string) bool { return wanted[name] }

// Map turns one scrape's parsed families (keyed by name as exposed) into an
// Observation. declared lists every family name seen in a TYPE line,
// including families with no samples or skipped by the pre-filter; it is
// used only to recognise the body and may be nil. Map never returns nil:
// a body with nothing known in it yields Generation "" and no signals.
// Observation.Stats is left for the parser to fill.
func Map(fams map[string]*dto.MetricFamily, declared []string) *sources.Observation {
	switch fingerprint(fams, declared) {
	case kindWorker:
		return mapWorker(fams)
	case kindSMG:
		return mapGateway(&smgAdapter, fams)
	case kindLegacy:
		return mapGateway(&legacyAdapter, fams)
	case kind2026:
		return mapGateway(&router2026Adapter, fams)
	}
	return &sources.Observation{}
}

// mapGateway maps a gateway body with one adapter.
func mapGateway(ad *adapter, fams map[string]*dto.MetricFamily) *sources.Observation {
	m := newMapper(ad, fams)
	m.run()
	return m.obs
}

// MapEngineMetrics splits a gateway's /engine_metrics re-export (every
// worker's metrics merged, ':' rewritten to '_', plus a worker_addr label)
// into one Observation per worker, keyed by sources.WorkerKey(worker_addr),
// each mapped exactly as that worker's own /metrics would be (Sources then
// name the "sglang_…" spellings). Series without worker_addr and families
// that are not SGLang's are ignored. declared is accepted for symmetry
// with Map and unused: every worker here is an SGLang worker. The result is
// never nil.
func MapEngineMetrics(fams map[string]*dto.MetricFamily, declared []string) map[string]*sources.Observation {
	_ = declared
	split := make(map[string]map[string]*dto.MetricFamily)
	for name, mf := range fams {
		if !strings.HasPrefix(name, "sglang_") && !strings.HasPrefix(name, "sglang:") {
			continue
		}
		for _, s := range mf.Metric {
			addr := labelValue(s, "worker_addr")
			if addr == "" {
				continue
			}
			key := sources.WorkerKey(addr)
			wf := split[key]
			if wf == nil {
				wf = make(map[string]*dto.MetricFamily)
				split[key] = wf
			}
			f := wf[name]
			if f == nil {
				f = &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type}
				wf[name] = f
			}
			f.Metric = append(f.Metric, s)
		}
	}
	out := make(map[string]*sources.Observation, len(split))
	for key, wf := range split {
		out[key] = mapWorker(wf)
	}
	return out
}
