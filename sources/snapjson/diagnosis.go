package snapjson

import (
	"sort"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// Diagnosis is the snapshot's conclusions (sources.Diagnosis): hit-gap
// verdicts with causes, capacity in units of work, admission and goodput,
// stalls, and the findings in one line each.
type Diagnosis struct {
	HitVerdicts []HitVerdict `json:"hit_verdicts"`
	Capacity    Capacity     `json:"capacity"`
	Admission   Admission    `json:"admission"`
	Stalls      []Stall      `json:"stalls"`
	Findings    []Finding    `json:"findings"`
}

// HitVerdict compares one replica's or worker's expected prefix hit with
// the actual one (ratios of sums over the window).
type HitVerdict struct {
	Scope     string    `json:"scope"`
	Target    string    `json:"target"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Expected  *HitRatio `json:"expected"`
	Basis     string    `json:"basis"`
	SameScale bool      `json:"same_scale"`
	Actual    *HitRatio `json:"actual"`
	GapRatio  *float64  `json:"gap_ratio"`
	Large     bool      `json:"large"`
	Causes    []Cause   `json:"causes"`
	Verdict   string    `json:"verdict"`
}

// Cause is a likely reason for a gap, with its evidence in words.
type Cause struct {
	Kind     string `json:"kind"`
	Evidence string `json:"evidence"`
}

// Capacity is the three accounts (prefill, decode, KV transfer) and the
// cold starts.
type Capacity struct {
	TargetUtilisationRatio float64     `json:"target_utilisation_ratio"`
	Prefill                *PoolLoad   `json:"prefill"`
	Decode                 *PoolLoad   `json:"decode"`
	Transfer               *Transfer   `json:"transfer"`
	ColdStarts             []ColdStart `json:"cold_starts"`
}

// PoolLoad is one pool's offered work against its measured sustained
// rate, in Unit per second.
type PoolLoad struct {
	Unit                  string   `json:"unit"`
	OfferedPerSecond      *float64 `json:"offered_per_second"`
	OfferedTotalPerSecond *float64 `json:"offered_total_per_second"`
	ServedPerSecond       *float64 `json:"served_per_second"`
	PerWorkerPerSecond    *float64 `json:"per_worker_per_second"`
	CapacityPerSecond     *float64 `json:"capacity_per_second"`
	LowerBound            bool     `json:"lower_bound"`
	Method                string   `json:"method"`
	UtilisationRatio      *float64 `json:"utilisation_ratio"`
	HeadroomPerSecond     *float64 `json:"headroom_per_second"`
	Workers               int      `json:"workers"`
	WorkersNeeded         *int     `json:"workers_needed"`
	ITLP50Seconds         *float64 `json:"itl_p50_seconds"`
	Note                  string   `json:"note,omitempty"`
}

// Transfer is the KV-transfer account in bytes per second.
type Transfer struct {
	BytesPerSecond *float64 `json:"bytes_per_second"`
	Links          []Link   `json:"links"`
}

// Link is one prefill worker's KV transfers: BusyRatio is capped at 1;
// InFlightMean (Little's law) says how far past 1 they overlap.
type Link struct {
	Name                    string   `json:"name"`
	BytesPerSecond          *float64 `json:"bytes_per_second"`
	BandwidthBytesPerSecond *float64 `json:"bandwidth_bytes_per_second"`
	BusyRatio               *float64 `json:"busy_ratio"`
	InFlightMean            *float64 `json:"in_flight_mean"`
	Queued                  bool     `json:"queued"`
	HeadroomBytesPerSecond  *float64 `json:"headroom_bytes_per_second"`
}

// ColdStart is the first minute after a restart, join or burst against
// the steady state.
type ColdStart struct {
	Kind   string    `json:"kind"`
	Name   string    `json:"name"`
	At     time.Time `json:"at"`
	Metric string    `json:"metric"`
	Unit   string    `json:"unit"`
	First  *float64  `json:"first"`
	Steady *float64  `json:"steady"`
	// ColdCache is false for a burst whose hit ratio held or rose.
	ColdCache bool `json:"cold_cache"`
	// ExplainedBy names other diagnoses behind a burst's TTFT rise.
	ExplainedBy string `json:"explained_by"`
	Text        string `json:"text"`
}

// Admission is offered → admitted → completed → goodput, requests per
// second summed over the gateway replicas.
type Admission struct {
	GatewayCounters           bool                `json:"gateway_counters"`
	OfferedPerSecond          *float64            `json:"offered_per_second"`
	AdmittedPerSecond         *float64            `json:"admitted_per_second"`
	CompletedPerSecond        *float64            `json:"completed_per_second"`
	RejectedPerSecond         map[string]*float64 `json:"rejected_per_second"`
	RejectedRatio             *float64            `json:"rejected_ratio"`
	RetriesPerSecond          *float64            `json:"retries_per_second"`
	RetriesExhaustedPerSecond *float64            `json:"retries_exhausted_per_second"`
	Goodput                   *Goodput            `json:"goodput"`
}

// Goodput is the share of completions meeting the SLO, with bounds.
type Goodput struct {
	Share          Range   `json:"share"`
	PerSecond      *Range  `json:"per_second"`
	TTFTShare      *Range  `json:"ttft_share"`
	ITLShare       *Range  `json:"itl_share"`
	SLOTTFTSeconds float64 `json:"slo_ttft_seconds"`
	SLOITLSeconds  float64 `json:"slo_itl_seconds"`
	// TTFTBucketSeconds and ITLBucketSeconds are the histogram bucket
	// bounds either side of each SLO: ttft_share.lo is exact at TTFT ≤
	// lo, ttft_share.hi at TTFT ≤ hi (hi null = no bucket above lo).
	TTFTBucketSeconds *BucketBounds `json:"ttft_bucket_seconds"`
	ITLBucketSeconds  *BucketBounds `json:"itl_bucket_seconds"`
	Method            string        `json:"method"`
}

// BucketBounds are the histogram bucket bounds around an SLO (seconds);
// Hi is null when the SLO lies beyond the highest finite bound.
type BucketBounds struct {
	Lo *float64 `json:"lo"`
	Hi *float64 `json:"hi"`
}

func bucketBounds(b sources.SLOBucket) *BucketBounds {
	if !b.Present {
		return nil
	}
	return &BucketBounds{Lo: num(b.Lo), Hi: num(b.Hi)}
}

// Range is an estimate between bounds.
type Range struct {
	Lo       float64 `json:"lo"`
	Estimate float64 `json:"estimate"`
	Hi       float64 `json:"hi"`
}

// Stall is a transfer stall or a decode collapse in progress.
type Stall struct {
	Kind           string    `json:"kind"`
	Target         string    `json:"target"`
	Name           string    `json:"name"`
	Role           string    `json:"role"`
	Since          time.Time `json:"since"`
	Seconds        float64   `json:"seconds"`
	QueuedRequests float64   `json:"queued_requests"`
	Detail         string    `json:"detail"`
}

// Finding is one conclusion in words.
type Finding struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Name     string `json:"name,omitempty"`
	Text     string `json:"text"`
}

// diagnosis builds the document's diagnosis section.
func diagnosis(s *sources.Snapshot) Diagnosis {
	d := &s.Diagnosis
	out := Diagnosis{HitVerdicts: []HitVerdict{}, Stalls: []Stall{}, Findings: []Finding{},
		Capacity: Capacity{TargetUtilisationRatio: d.Capacity.TargetUtil, ColdStarts: []ColdStart{}}}
	for _, v := range d.Hits {
		x := HitVerdict{Scope: v.Scope, Target: v.ID, Name: v.Name, Role: v.Role.String(), Expected: hit(v.Expected),
			Basis: v.Basis, SameScale: v.SameScale, Actual: hit(v.Actual), Large: v.Large, Causes: []Cause{}, Verdict: v.Verdict}
		if v.GapKnown {
			x.GapRatio = num(v.Gap)
		}
		for _, c := range v.Causes {
			x.Causes = append(x.Causes, Cause{Kind: string(c.Kind), Evidence: c.Evidence})
		}
		out.HitVerdicts = append(out.HitVerdicts, x)
	}
	c := &d.Capacity
	out.Capacity.Prefill, out.Capacity.Decode = poolLoad(&c.Prefill), poolLoad(&c.Decode)
	if c.Transfer.Present {
		t := &Transfer{BytesPerSecond: value(c.Transfer.Rate), Links: []Link{}}
		for _, l := range c.Transfer.Links {
			t.Links = append(t.Links, Link{Name: l.Name, BytesPerSecond: value(l.Rate),
				BandwidthBytesPerSecond: value(l.Bandwidth), BusyRatio: value(l.Busy), InFlightMean: value(l.InFlight),
				Queued: l.Queued, HeadroomBytesPerSecond: value(l.Headroom)})
		}
		out.Capacity.Transfer = t
	}
	for _, cs := range c.ColdStarts {
		out.Capacity.ColdStarts = append(out.Capacity.ColdStarts, ColdStart{Kind: cs.Kind, Name: cs.Name, At: cs.At.UTC(),
			Metric: cs.Metric, Unit: cs.Unit, First: num(cs.First), Steady: num(cs.Steady), ColdCache: cs.Cold,
			ExplainedBy: cs.Explained, Text: cs.Text})
	}
	a := &d.Admission
	out.Admission = Admission{GatewayCounters: a.Present, OfferedPerSecond: value(a.Offered),
		AdmittedPerSecond: value(a.Admitted), CompletedPerSecond: value(a.Completed),
		RejectedPerSecond: map[string]*float64{}, RejectedRatio: value(a.RejectedShare),
		RetriesPerSecond: value(a.Retried), RetriesExhaustedPerSecond: value(a.RetriesExhausted)}
	for k, r := range a.Rejected {
		out.Admission.RejectedPerSecond[k] = value(r)
	}
	if g := a.Goodput; g.Present {
		out.Admission.Goodput = &Goodput{Share: rangeOf(g.Share), PerSecond: rangePtr(g.Rate),
			TTFTShare: rangePtr(g.TTFT), ITLShare: rangePtr(g.ITL), SLOTTFTSeconds: g.SLOTTFT,
			SLOITLSeconds: g.SLOITL, TTFTBucketSeconds: bucketBounds(g.TTFTBucket), ITLBucketSeconds: bucketBounds(g.ITLBucket),
			Method: g.Method}
	}
	for _, st := range d.Stalls {
		out.Stalls = append(out.Stalls, Stall{Kind: st.Kind, Target: st.ID, Name: st.Name, Role: st.Role.String(),
			Since: st.Since.UTC(), Seconds: st.For.Seconds(), QueuedRequests: finite(st.Queued), Detail: st.Detail})
	}
	for _, f := range d.Findings {
		out.Findings = append(out.Findings, Finding{Severity: severity(f.Severity), Kind: f.Kind, Name: f.Name, Text: f.Text})
	}
	sort.SliceStable(out.Capacity.ColdStarts, func(i, j int) bool {
		return out.Capacity.ColdStarts[i].At.Before(out.Capacity.ColdStarts[j].At)
	})
	return out
}

func poolLoad(p *sources.PoolLoad) *PoolLoad {
	if !p.Present {
		return nil
	}
	out := &PoolLoad{Unit: p.Unit, OfferedPerSecond: value(p.Offered), OfferedTotalPerSecond: value(p.OfferedTotal),
		ServedPerSecond: value(p.Served), PerWorkerPerSecond: value(p.PerWorker), CapacityPerSecond: value(p.Capacity),
		LowerBound: p.LowerBound, Method: p.Method, UtilisationRatio: value(p.Utilisation),
		HeadroomPerSecond: value(p.Headroom), Workers: p.Workers, Note: p.Note}
	if p.WorkersNeeded > 0 {
		n := p.WorkersNeeded
		out.WorkersNeeded = &n
	}
	if p.ITL.Present {
		out.ITLP50Seconds = num(p.ITL.P50)
	}
	return out
}

func rangeOf(r sources.Range) Range {
	return Range{Lo: finite(r.Lo), Estimate: finite(r.Est), Hi: finite(r.Hi)}
}

func rangePtr(r sources.Range) *Range {
	if !r.Present {
		return nil
	}
	x := rangeOf(r)
	return &x
}

func severity(s sources.Severity) string {
	switch s {
	case sources.SevCrit:
		return "crit"
	case sources.SevWarn:
		return "warn"
	}
	return "info"
}
