package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// serveBody serves body at every path on loopback.
func serveBody(t *testing.T, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// When no target ever answers, pdtop snapshot stops after each has failed
// its first scrapes instead of waiting out the window, and says so.
func TestSnapshotGivesUpWhenEveryScrapeFails(t *testing.T) {
	var out, errOut bytes.Buffer
	rc := run([]string{"snapshot", "--prefill", "127.0.0.1:1", "--window", "10m", "--interval", "100ms"}, &out, &errOut)
	e := errOut.String()
	if rc != 1 || out.Len() != 0 || !strings.Contains(e, "the first 3 scrapes of every target failed") ||
		!strings.Contains(e, "of the 10m window") || !strings.Contains(e, "refused") {
		t.Fatalf("exit %d, stdout %q, stderr %q", rc, out.String(), e)
	}
}

// A target serving another exporter's metrics is down (no-metrics) in the
// JSON and not counted up, while an SGLang worker beside it is; and a
// target that answered keeps the whole window (no early stop).
func TestSnapshotForeignMetricsTargetIsDown(t *testing.T) {
	worker, err := os.ReadFile("../../sources/schema/testdata/worker_2026_prefill.prom")
	if err != nil {
		t.Fatal(err)
	}
	good := serveBody(t, worker)
	node := serveBody(t, []byte("# TYPE node_load1 gauge\nnode_load1 0.5\n"))
	var out, errOut bytes.Buffer
	rc := run([]string{"snapshot", "--prefill", good + "/metrics", "--prefill", node + "/path",
		"--window", "500ms", "--interval", "100ms", "--format", "json"}, &out, &errOut)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	var doc struct {
		Fleet struct {
			Targets   int `json:"targets"`
			TargetsUp int `json:"targets_up"`
		} `json:"fleet"`
		Targets []struct {
			ID        string `json:"id"`
			Health    string `json:"health"`
			LastError *struct {
				Class   string `json:"class"`
				Message string `json:"message"`
			} `json:"last_error"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if doc.Fleet.Targets != 2 || doc.Fleet.TargetsUp != 1 {
		t.Errorf("fleet %d/%d up, want 1/2", doc.Fleet.TargetsUp, doc.Fleet.Targets)
	}
	found := false
	for _, ts := range doc.Targets {
		if strings.HasSuffix(ts.ID, "/path") {
			found = true
			if ts.Health != "down" || ts.LastError == nil || ts.LastError.Class != "no-metrics" ||
				!strings.Contains(ts.LastError.Message, "wrong port or path?") {
				t.Errorf("foreign target: %+v %+v", ts, ts.LastError)
			}
		} else if ts.Health != "up" {
			t.Errorf("SGLang worker: %+v", ts)
		}
	}
	if !found {
		t.Errorf("no foreign target in %s", out.String())
	}

	// The text says NOT SGLANG on the summary line and the worker's row.
	out.Reset()
	if rc := run([]string{"snapshot", "--prefill", good + "/metrics", "--prefill", node + "/path",
		"--window", "300ms", "--interval", "100ms", "--width", "120"}, &out, &errOut); rc != 0 {
		t.Fatalf("text: exit %d: %s", rc, errOut.String())
	}
	if txt := out.String(); !strings.Contains(txt, "1/2 up (1 NOT SGLANG)") || strings.Count(txt, "NOT SGLANG") < 2 {
		t.Errorf("text snapshot:\n%s", txt)
	}
}

// allFailing gives up only when every target failed its first scrapes
// and none ever answered: one that answered once, one still pending or
// one newly discovered keeps the window going.
func TestAllFailing(t *testing.T) {
	refused := &sources.ScrapeError{Class: sources.ErrRefused, Message: "refused"}
	a := sources.TargetStatus{ID: "a", Health: sources.Down, LastError: refused}
	b := a
	b.ID = "b"
	tries := map[string]int{"a": 3, "b": 3}
	if !allFailing(&sources.Snapshot{Targets: []sources.TargetStatus{a, b}}, tries) {
		t.Error("every target failed 3 times: want give up")
	}
	answered := b
	answered.Health, answered.LastSuccess = sources.Stale, time.Unix(1, 0)
	pending := sources.TargetStatus{ID: "b", Health: sources.Pending}
	for name, c := range map[string]struct {
		ts    sources.TargetStatus
		tries int
	}{"answered once": {answered, 5}, "pending": {pending, 0}, "two failures": {b, 2}} {
		tries["b"] = c.tries
		if allFailing(&sources.Snapshot{Targets: []sources.TargetStatus{a, c.ts}}, tries) {
			t.Errorf("%s: gave up", name)
		}
	}
	if allFailing(&sources.Snapshot{}, nil) {
		t.Error("no targets yet: gave up")
	}
}
