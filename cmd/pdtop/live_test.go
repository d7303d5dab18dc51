package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sim"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A bad config file is reported, naming the field or line, and pdtop exits
// non-zero before it would start the TUI (the terminal check comes later).
func TestBadConfigExitsBeforeTheTUI(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"gateways:\n  - url: gw:29000\n    discovry: false\n", "line 3: field discovry not found"},
		{"targets:\n  - url: ftp://w:1\n", `targets[0].url: scheme "ftp" not supported`},
		{"targets:\n  - url: https://w:1\n    tls_config:\n      ca_file: missing-ca.pem\n", "targets[0].tls_config.ca_file: open "},
		{"interval: 2s\ntimeout: 3s\n", "timeout: 3s is longer than interval 2s"},
	} {
		path := writeFile(t, "pdtop.yaml", c.doc)
		var out, errb bytes.Buffer
		code := run([]string{"--config", path}, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), c.want) || strings.Contains(errb.String(), "not a terminal") {
			t.Errorf("exit %d, stderr %q; want 1 and %q", code, errb.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--config", "/nonexistent/pdtop.yaml"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "--config: open /nonexistent/pdtop.yaml") {
		t.Errorf("missing file: exit %d %q", code, errb.String())
	}
	path := writeFile(t, "pdtop.yaml", "targets:\n  - url: http://w:1\n")
	errb.Reset()
	if code := run([]string{"--config", path, "--decode", "w:1"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "--decode http://w:1/metrics is already given in the config file") {
		t.Errorf("duplicate: exit %d %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"--decode", "http://u:p@w:1"}, &out, &errb); code != 1 || strings.Contains(errb.String(), ":p@") ||
		!strings.Contains(errb.String(), "credentials in the URL are not allowed") {
		t.Errorf("userinfo: exit %d %q", code, errb.String())
	}
}

const sentinel = "SENTINEL-token-c0ffee42"

// A live run from a config file with credentials, against targets that
// accept them, reject them and echo them back (in an HTML title, in a
// bad line, in a redirect): the right targets are up, the failures are
// classified, and the secret appears in no log line, no snapshot and no
// error.
func TestSecretsNeverLeaveTheirRequest(t *testing.T) {
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+sentinel {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 4\n"))
	}))
	defer good.Close()
	echo401 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "<html><title>denied %s</title></html>", r.Header.Get("Authorization"))
	}))
	defer echo401.Close()
	echoLine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{a=\"%s\"} oops\nsglang:num_queue_reqs 1\n", r.Header.Get("Authorization"))
	}))
	defer echoLine.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.example/?t="+sentinel, http.StatusFound)
	}))
	defer redirect.Close()

	doc := "interval: 1s\ntargets:\n"
	for i, u := range []string{good.URL, echo401.URL, echoLine.URL, redirect.URL, good.URL + "/m2?token=" + sentinel} {
		doc += fmt.Sprintf("  - url: %s\n    role: decode\n    name: w%d\n    bearer_token: %s\n", u, i, sentinel)
	}
	path := writeFile(t, "pdtop.yaml", doc)
	c, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	f := fromConfig(c)
	vf := viewFlags{interval: time.Second, timeout: 2 * time.Second, window: time.Minute}
	var logBuf bytes.Buffer
	logger := newLogger(&logBuf, f.secrets)
	live, _, err := f.backend(vf, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		var wg sync.WaitGroup
		for _, j := range live.Round() {
			wg.Add(1)
			go func(j sources.Job) { defer wg.Done(); j.Run(context.Background()) }(j)
		}
		wg.Wait()
	}
	logger.Info("config", "file", c, "targets", c.Targets, "secrets", c.Secrets())
	snap := live.Snapshot(time.Minute)
	state := map[string]string{}
	for _, ts := range snap.Targets {
		s := ts.Health.String()
		if ts.LastError != nil {
			s += " " + string(ts.LastError.Class)
		}
		if ts.Problems > 0 {
			s += fmt.Sprintf(" problems=%d", ts.Problems)
		}
		state[ts.Name] = s
	}
	want := map[string]string{"w0": "up", "w1": "down auth", "w2": "up problems=1", "w3": "down config", "w4": "up"}
	for k, v := range want {
		if state[k] != v {
			t.Errorf("%s: %q, want %q", k, state[k], v)
		}
	}
	js, _ := json.Marshal(snap)
	for what, s := range map[string]string{
		"log": logBuf.String(), "snapshot JSON": string(js), "snapshot %+v": fmt.Sprintf("%+v", snap),
		"config %+v": fmt.Sprintf("%+v %#v", c, c),
	} {
		if strings.Contains(s, sentinel) {
			t.Errorf("%s shows the secret:\n%s", what, s)
		}
	}
	if !strings.Contains(logBuf.String(), "scrape failed") {
		t.Errorf("failures not logged:\n%s", logBuf.String())
	}
}

// The demo scrapes its gateways and discovers the workers from them (smg,
// legacy); the 2026 router has no worker list, so its workers are listed
// from the fleet.
func TestDemoDiscoversItsWorkers(t *testing.T) {
	for _, gen := range []string{sim.GatewaySMG, sim.GatewayLegacy, sim.Gateway2026} {
		f, err := sim.New(sim.Config{Seed: 1, Prefill: 2, Decode: 2, Replicas: 2, Gateway: gen, Scenario: "steady"})
		if err != nil {
			t.Fatal(err)
		}
		eps, err := f.Serve("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		fl := demoFleet(f, eps)
		live, start, err := fl.backend(viewFlags{interval: time.Second, timeout: time.Second, window: time.Minute}, newLogger(&bytes.Buffer{}, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		start(ctx)
		deadline := time.Now().Add(10 * time.Second)
		var got map[string]sources.Target
		for time.Now().Before(deadline) {
			got = map[string]sources.Target{}
			for _, tg := range live.Store.Targets() {
				got[tg.Name] = tg
			}
			if len(got) == 6 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		f.Close()
		wantOrigin := sources.OriginGateway
		if gen == sim.Gateway2026 {
			wantOrigin = sources.OriginDemo
		}
		for _, n := range []string{"prefill-0", "prefill-1", "decode-0", "decode-1"} {
			if got[n].Origin != wantOrigin || got[n].Role == sources.RoleUnknown {
				t.Errorf("%s: %s: %+v (all: %v)", gen, n, got[n], got)
			}
		}
		if got["gateway-1"].Role != sources.RoleGateway {
			t.Errorf("%s: gateways %v", gen, got)
		}
	}
}
