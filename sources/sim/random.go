package sim

import (
	"math"
	"math/rand/v2"
	"sort"
)

// newRand returns a PCG source for one named stream of the fleet, so that
// (for example) adding a worker does not shift the arrival sequence.
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), mix(stream, 0x9e3779b97f4a7c15)))
}

// mix is splitmix64 over two words: a cheap, well-spread hash used for
// prefix keys and for values derived from the seed without consuming a
// random stream.
func mix(a, b uint64) uint64 {
	z := a ^ (b + 0x9e3779b97f4a7c15 + (a << 6) + (a >> 2))
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unitFromHash maps a hash to (0, 1).
func unitFromHash(h uint64) float64 {
	return (float64(h>>11) + 0.5) / (1 << 53)
}

// normalFromHash is a deterministic standard normal from two hashes
// (Box–Muller).
func normalFromHash(h uint64) float64 {
	u1 := unitFromHash(h)
	u2 := unitFromHash(mix(h, 1))
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// poisson draws a Poisson count with the given mean.
func poisson(r *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		n := int(math.Round(mean + math.Sqrt(mean)*r.NormFloat64()))
		return max(n, 0)
	}
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// logNormal draws median × e^(sigma·N(0,1)).
func logNormal(r *rand.Rand, median, sigma float64) float64 {
	if sigma == 0 {
		return median
	}
	return median * math.Exp(sigma*r.NormFloat64())
}

// zipfTable samples ranks 0..n-1 with P(k) ∝ 1/(k+1)^s, for any s > 0
// (math/rand's Zipf needs s > 1).
type zipfTable struct {
	cdf []float64
}

func newZipfTable(n int, s float64) *zipfTable {
	cdf := make([]float64, n)
	sum := 0.0
	for k := range n {
		sum += 1 / math.Pow(float64(k+1), s)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	return &zipfTable{cdf: cdf}
}

func (z *zipfTable) sample(r *rand.Rand) int {
	u := r.Float64()
	i := sort.SearchFloat64s(z.cdf, u)
	return min(i, len(z.cdf)-1)
}
