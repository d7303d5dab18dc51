package main

import (
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// synth serves one /metrics body holding a whole synthetic SGLang fleet:
// every worker's series carry their own instance label, so a Prometheus
// scraping it with honor_labels sees N workers. Values move with time
// (counters grow at a per-worker rate, gauges and latencies wander), so
// rates, hit ratios and quantiles are all non-trivial. It exists to give
// the Prometheus backend a 10,000-worker fleet that the demo simulator
// could not run on one machine.
func synth(args []string) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	workers := fs.Int("workers", 10000, "workers in the synthetic fleet")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	start := time.Now()
	var mu sync.Mutex
	var buf []byte
	http.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		buf = synthBody(buf[:0], *workers, time.Since(start).Seconds())
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(buf)
	})
	go func() { // exit with the parent
		b := make([]byte, 1)
		_, _ = os.Stdin.Read(b)
		os.Exit(0)
	}()
	return http.Serve(ln, nil)
}

var (
	ttftBounds = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	itlBounds  = []float64{0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25}
)

// synthBody appends the exposition of n workers at time t (seconds).
func synthBody(b []byte, n int, t float64) []byte {
	line := func(name, labels string, v float64) {
		b = append(b, name...)
		b = append(b, '{')
		b = append(b, labels...)
		b = append(b, "} "...)
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
		b = append(b, '\n')
	}
	for i := 0; i < n; i++ {
		role := "prefill"
		if i%2 == 1 {
			role = "decode"
		}
		id := fmt.Sprintf(`instance="w%05d:30000",engine_type="%s",model_name="m"`, i, role)
		tok := id + `,tp_rank="0"`
		f := 0.5 + 0.5*math.Sin(t/60+float64(i))
		load := 1 + float64(i%7)
		line("sglang:num_running_reqs", tok, math.Round(load*8*f))
		line("sglang:num_queue_reqs", tok, math.Round(load*3*f*f))
		line("sglang:num_prefill_bootstrap_queue_reqs", tok, math.Round(load*f))
		line("sglang:num_prefill_inflight_queue_reqs", tok, math.Round(load*f))
		line("sglang:num_decode_prealloc_queue_reqs", tok, math.Round(load*f*0.5))
		line("sglang:num_decode_transfer_queue_reqs", tok, math.Round(load*f*0.5))
		line("sglang:token_usage", tok, 0.2+0.6*f)
		line("sglang:max_total_num_tokens", tok, 600000)
		line("sglang:cache_hit_rate", tok, 0.3+0.4*f)
		line("sglang:num_retracted_reqs", tok+`,pid="1000"`, 0)
		reqs := t * load * 0.5
		line("sglang:num_requests_total", id, math.Floor(reqs))
		line("sglang:prompt_tokens_total", id, math.Floor(reqs*5000))
		line("sglang:cached_tokens_total", id, math.Floor(reqs*5000*(0.5+0.02*float64(i%10))))
		line("sglang:generation_tokens_total", id, math.Floor(reqs*250))
		line("sglang:realtime_tokens_total", tok+`,mode="decode"`, math.Floor(reqs*250))
		b = synthHist(b, "sglang:time_to_first_token_seconds", id, ttftBounds, math.Floor(reqs), 0.3*load/4)
		b = synthHist(b, "sglang:inter_token_latency_seconds", id, itlBounds, math.Floor(reqs*250), 0.02*load/4)
	}
	return b
}

// synthHist appends a histogram of count observations spread around mean.
func synthHist(b []byte, name, labels string, bounds []float64, count, mean float64) []byte {
	for _, le := range bounds {
		frac := 1 - math.Exp(-le/mean)
		b = append(b, name...)
		b = append(b, "_bucket{"...)
		b = append(b, labels...)
		b = append(b, `,le="`...)
		b = strconv.AppendFloat(b, le, 'g', -1, 64)
		b = append(b, `"} `...)
		b = strconv.AppendFloat(b, math.Floor(count*frac), 'g', -1, 64)
		b = append(b, '\n')
	}
	for _, p := range []struct {
		suffix string
		v      float64
	}{{`_bucket{` + labels + `,le="+Inf"} `, count}, {`_sum{` + labels + `} `, count * mean}, {`_count{` + labels + `} `, count}} {
		b = append(b, name...)
		b = append(b, p.suffix...)
		b = strconv.AppendFloat(b, p.v, 'g', -1, 64)
		b = append(b, '\n')
	}
	return b
}
