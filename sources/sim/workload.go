package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// segment is one piece of a prompt: the system prompt, a document, or one
// conversation turn (previous answer + new question). key identifies the
// whole prefix up to and including this segment (a hash chain), so two
// prompts share a cached prefix exactly as far as their keys agree. No
// token arrays are ever stored.
type segment struct {
	key    uint64
	tokens int
}

// conversation is one user's thread about one document.
type conversation struct {
	id      uint64
	segs    []segment
	turns   int
	lastOut int
}

// Document ids: shared documents are 0..n-1; scale-out's long reports
// start at reportDocBase (twice as long); the announcement's new documents
// at hotDocBase; private documents at privateDocBase.
const (
	reportDocBase  = 1 << 39
	hotDocBase     = 1 << 40
	privateDocBase = 1 << 41
	hotZipfS       = 0.5
)

// maxOpenConversations bounds the follow-up pool (oldest dropped first).
const maxOpenConversations = 1024

// workload generates arrivals: Poisson with bursts, Zipf-popular documents,
// and follow-ups that extend an open conversation.
type workload struct {
	w    Workload
	salt uint64
	rng  *rand.Rand // arrivals and request shapes

	rate      float64 // base rate, req/s
	open      []*conversation
	nextConv  uint64
	zipfs     map[zipfKey]*zipfTable
	burstEnd  time.Duration
	nextBurst time.Duration
}

type zipfKey struct {
	n int
	s float64
}

func newWorkload(seed int64, w Workload, rate float64) *workload {
	wl := &workload{
		w:     w,
		salt:  mix(uint64(seed), 0x5eed),
		rng:   newRand(seed, 1),
		rate:  rate,
		zipfs: map[zipfKey]*zipfTable{},
	}
	wl.nextBurst = wl.burstGap()
	return wl
}

func (wl *workload) burstGap() time.Duration {
	if wl.w.BurstEvery <= 0 || wl.w.BurstFactor <= 1 {
		return math.MaxInt64
	}
	return time.Duration(wl.rng.ExpFloat64() * float64(wl.w.BurstEvery))
}

// currentRate is the arrival rate at t under the scenario conditions.
func (wl *workload) currentRate(t time.Duration, c *conditions) float64 {
	for t >= wl.nextBurst {
		wl.burstEnd = wl.nextBurst + wl.w.BurstLength
		wl.nextBurst = wl.burstEnd + wl.burstGap()
	}
	r := wl.rate * c.rateMult
	if t < wl.burstEnd && !c.noBursts {
		r *= wl.w.BurstFactor
	}
	return r
}

// arrivals returns the arrival times in [t0, t1), sorted.
func (wl *workload) arrivals(t0, t1 time.Duration, c *conditions) []time.Duration {
	n := poisson(wl.rng, wl.currentRate(t0, c)*(t1-t0).Seconds())
	if n == 0 {
		return nil
	}
	ts := make([]time.Duration, n)
	for i := range ts {
		ts[i] = t0 + time.Duration(wl.rng.Float64()*float64(t1-t0))
	}
	slices.Sort(ts)
	return ts
}

// docTokens is a document's length, derived from its id alone.
func (wl *workload) docTokens(doc uint64) int {
	median := float64(wl.w.DocTokens)
	if doc >= reportDocBase && doc < hotDocBase {
		median *= 2
	}
	n := median * math.Exp(wl.w.DocSpread*normalFromHash(mix(wl.salt, doc)))
	lo, hi := median/4, median*4
	return max(1, int(math.Min(math.Max(n, lo), hi)))
}

func (wl *workload) zipf(n int, s float64) *zipfTable {
	k := zipfKey{n, s}
	z, ok := wl.zipfs[k]
	if !ok {
		z = newZipfTable(n, s)
		wl.zipfs[k] = z
	}
	return z
}

// pickDoc chooses the document of a new conversation.
func (wl *workload) pickDoc(convID uint64, c *conditions) uint64 {
	if c.hotShare > 0 && wl.rng.Float64() < c.hotShare {
		return hotDocBase + uint64(wl.zipf(c.hotDocs, hotZipfS).sample(wl.rng))
	}
	if wl.w.PrivateDocuments {
		return privateDocBase + convID
	}
	if c.docs > 0 {
		return c.docBase + uint64(wl.zipf(c.docs, c.docZipfS).sample(wl.rng))
	}
	return uint64(wl.zipf(wl.w.Documents, wl.w.ZipfS).sample(wl.rng))
}

// next builds the request of one arrival: a follow-up turn of an open
// conversation, or the first turn of a new one.
// It returns the conversation, the prompt's segments and length, the
// output length and max_tokens (the cap the client asked for).
func (wl *workload) next(c *conditions) (*conversation, []segment, int, int, int) {
	var conv *conversation
	if len(wl.open) > 0 && wl.rng.Float64() < wl.w.FollowUp {
		i := wl.rng.IntN(len(wl.open))
		conv = wl.open[i]
		wl.open = slices.Delete(wl.open, i, i+1)
	} else {
		wl.nextConv++
		conv = &conversation{id: wl.nextConv}
		parent := wl.salt
		if wl.w.SystemPromptTokens > 0 {
			parent = mix(parent, 1)
			conv.segs = append(conv.segs, segment{key: parent, tokens: wl.w.SystemPromptTokens})
		}
		doc := wl.pickDoc(conv.id, c)
		conv.segs = append(conv.segs, segment{key: mix(parent, doc+2), tokens: wl.docTokens(doc)})
	}
	conv.turns++
	q := 0
	if wl.w.QuestionTokens > 0 {
		q = wl.w.QuestionTokens/2 + wl.rng.IntN(wl.w.QuestionTokens+1)
	}
	turn := q + conv.lastOut
	if turn > 0 {
		parent := conv.segs[len(conv.segs)-1].key
		key := mix(parent, mix(conv.id, uint64(conv.turns)))
		conv.segs = append(conv.segs, segment{key: key, tokens: turn})
	}
	prompt := 0
	for _, s := range conv.segs {
		prompt += s.tokens
	}
	outCap := wl.w.OutputCap
	if c.outputCap > 0 {
		outCap = c.outputCap
	}
	spread := wl.w.OutputSpread
	if c.outputSpread >= 0 {
		spread = c.outputSpread
	}
	out := logNormal(wl.rng, float64(wl.w.OutputTokens)*c.outputMult, spread)
	output := max(1, min(outCap, int(math.Round(out))))
	return conv, conv.segs, prompt, output, outCap
}

// done returns a conversation to the follow-up pool after a successful
// turn; failed turns abandon it (the user gave up).
func (wl *workload) done(conv *conversation, output int, ok bool) {
	if conv == nil || !ok || conv.turns >= wl.w.MaxTurns || wl.w.FollowUp == 0 {
		return
	}
	conv.lastOut = output
	if len(wl.open) >= maxOpenConversations {
		wl.open = slices.Delete(wl.open, 0, 1)
	}
	wl.open = append(wl.open, conv)
}
