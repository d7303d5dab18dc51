package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	pconfig "github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/config"
	"github.com/pdtop/pdtop/sources/scrape"
	"github.com/pdtop/pdtop/sources/store"
)

// Credentials from a config file never reach the screen, even from
// targets that echo them back in an HTML title, in a bad line, in a
// metric label value or in their URL's query: every panel, the targets
// view and the help overlay are drawn at three sizes and searched.
func TestCredentialsNeverOnScreen(t *testing.T) {
	const secret = "SENTINEL-screen-8e1d"
	const pass = "SENTINEL-pass-77aa"
	echo := func(w http.ResponseWriter, r *http.Request) string {
		return r.Header.Get("Authorization") + " " + r.URL.RawQuery
	}
	handlers := []http.HandlerFunc{
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, "<title>denied %s</title>", echo(w, r))
		},
		func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=%q} 2\nsglang:num_queue_reqs{x=\"%s\"} nope\n", echo(w, r), echo(w, r))
		},
		func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "# TYPE smg_worker_health gauge\nsmg_worker_health{worker=\"http://%s:1\"} 1\n", strings.ReplaceAll(echo(w, r), " ", ""))
		},
	}
	doc := "targets:\n"
	for i, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		auth := "    bearer_token: " + secret + "\n"
		if i == 2 {
			auth = "    basic_auth:\n      username: u\n      password: " + pass + "\n"
		}
		doc += fmt.Sprintf("  - url: %s/metrics?key=%s\n    name: t%d\n%s", srv.URL, secret, i, auth)
	}
	f, err := config.Parse([]byte(doc), "")
	if err != nil {
		t.Fatal(err)
	}
	now := start
	st := store.New(store.Options{Interval: time.Second})
	def, _ := scrape.NewClient(defaultHTTPForTests(), scrape.Options{})
	sc := collect.New(def, collect.Options{Clock: func() time.Time { return now }})
	var targets []sources.Target
	for _, c := range f.Targets {
		tg := sources.Target{ID: c.URL.String(), URL: c.URL.Full(), Name: c.Name, Role: sources.RoleDecode, Origin: sources.OriginConfig, Auth: c.HTTP.Auth()}
		cl, err := scrape.NewClient(c.HTTP.Config(), scrape.Options{Timeout: 2 * time.Second, TargetURL: tg.URL})
		if err != nil {
			t.Fatal(err)
		}
		sc.SetClient(tg.ID, cl)
		targets = append(targets, tg)
	}
	st.SetTargets(now, targets)
	for i := 0; i < 2; i++ {
		now = now.Add(time.Second)
		for _, tg := range targets {
			st.Ingest(sc.Scrape(context.Background(), tg))
		}
	}
	snap := st.Snapshot(now, time.Minute)
	if snap.Targets[0].LastError == nil || snap.Targets[0].LastError.Class != sources.ErrAuth || snap.Targets[1].Problems != 1 {
		t.Fatalf("targets did not fail as set up: %+v", snap.Targets)
	}
	live := &collect.Live{Store: st, Clock: func() time.Time { return now }}
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}} {
		m := New(Config{Backend: live, Interval: time.Second, Window: time.Minute})
		m.Update(tea_WindowSize(size[0], size[1]))
		m.Update(snapMsg{snap: snap})
		var frames []string
		for p := 0; p < len(m.panels); p++ {
			m.setFocus(p)
			m.zoom = true
			m.layout()
			frames = append(frames, m.View())
		}
		hit(m, "t")
		frames = append(frames, m.View())
		hit(m, "?")
		frames = append(frames, m.View())
		for _, fr := range frames {
			for _, s := range []string{secret, pass} {
				if strings.Contains(fr, s) {
					t.Fatalf("%dx%d: secret on screen:\n%s", size[0], size[1], fr)
				}
			}
		}
		if !strings.Contains(frames[len(frames)-2], "<redacted>") {
			t.Errorf("the echoed secret should show as <redacted>:\n%s", frames[len(frames)-2])
		}
	}
}

func defaultHTTPForTests() pconfig.HTTPClientConfig { return pconfig.HTTPClientConfig{} }
