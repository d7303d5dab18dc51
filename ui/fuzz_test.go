package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/pdtop/pdtop/panels"
	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/store"
	"github.com/pdtop/pdtop/themes"
)

// FuzzParseIngestRender feeds arbitrary bodies through the whole
// parse-and-ingest path — collect.Process (pre-pass, lenient parse,
// schema) → store ingest as a worker and as a gateway, twice, so rates
// and histogram deltas are derived → snapshot → every panel and the
// targets view drawn at three sizes — and checks that nothing panics,
// every frame is exactly its size and no control character reaches the
// screen. Seeds: the reference fixtures and testdata/fuzz.
//
//	go test ./ui -run '^$' -fuzz FuzzParseIngestRender -fuzztime 30s -fuzzminimizetime 3s
func FuzzParseIngestRender(f *testing.F) {
	for _, dir := range []string{"../sources/schema/testdata", "../sources/expo/testdata"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.prom"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
				f.Add(b)
			}
		}
	}
	st := themes.NewStyles(themes.Mono())
	all := append(panels.All(st), panels.NewTargets(st))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := store.New(store.Options{Interval: time.Second})
		targets := []sources.Target{
			{ID: "w", URL: "http://w/metrics", Name: "w", Role: sources.RoleDecode},
			{ID: "p", URL: "http://p/metrics", Name: "p", Role: sources.RolePrefill},
			{ID: "g", URL: "http://g/metrics", Name: "g", Role: sources.RoleGateway},
			{ID: "h", URL: "http://h/metrics", Name: "h", Role: sources.RoleGateway},
		}
		s.SetTargets(start, targets)
		for i := 0; i < 2; i++ {
			at := start.Add(time.Duration(i+1) * time.Second)
			obs, err := collect.Process(body)
			for _, tg := range targets {
				s.Ingest(sources.ScrapeResult{TargetID: tg.ID, Time: at, Obs: obs, Err: err, BytesBody: int64(len(body))})
			}
		}
		snap := s.Snapshot(start.Add(2*time.Second), time.Minute)
		for _, p := range all {
			p.SetSnapshot(snap)
			for _, sz := range [][2]int{{40, 10}, {80, 24}, {200, 60}} {
				p.SetSize(sz[0], sz[1])
				v := p.View()
				lines := strings.Split(v, "\n")
				if len(lines) != sz[1] {
					t.Fatalf("%s %dx%d: %d lines", p.Title(), sz[0], sz[1], len(lines))
				}
				for i, l := range lines {
					if w := ansi.StringWidth(l); w != sz[0] {
						t.Fatalf("%s %dx%d: line %d is %d cells: %q", p.Title(), sz[0], sz[1], i, w, l)
					}
				}
				if strings.Contains(v, "render error") {
					t.Fatalf("%s %dx%d: %s", p.Title(), sz[0], sz[1], v)
				}
				for i, r := range v {
					if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
						t.Fatalf("%s %dx%d: control character %U at %d:\n%q", p.Title(), sz[0], sz[1], r, i, v)
					}
				}
			}
		}
	})
}
