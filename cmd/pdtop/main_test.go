package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/collect"
	"github.com/pdtop/pdtop/sources/store"
)

type env map[string]string

func (e env) Environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}
func (e env) Getenv(k string) string { return e[k] }

// TestColorProfile: NO_COLOR keeps text attributes (the mono theme has no
// colours to drop), TERM=dumb is plain, and tmux's TERM=screen gets the 16
// ANSI colours.
func TestColorProfile(t *testing.T) {
	for _, c := range []struct {
		env  env
		want termenv.Profile
	}{
		{env{"TERM": "xterm-256color", "NO_COLOR": "1"}, termenv.ANSI256},
		{env{"TERM": "dumb"}, termenv.Ascii},
		{env{"TERM": "screen"}, termenv.ANSI},
		{env{"TERM": "tmux-256color"}, termenv.ANSI256},
		{env{"TERM": "xterm"}, termenv.ANSI},
	} {
		out := termenv.NewOutput(&bytes.Buffer{}, termenv.WithEnvironment(c.env), termenv.WithTTY(true))
		if got := colorProfile(out, c.env.Getenv, true); got != c.want {
			t.Errorf("%v: profile %v, want %v", c.env, got, c.want)
		}
	}
}

// TestSnapshotDemoText: pdtop snapshot demo prints every panel as plain
// text no wider than --width, with no escape codes.
func TestSnapshotDemoText(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"snapshot", "demo", "--window", "2s", "--width", "100"}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	v := out.String()
	if strings.Contains(v, "\x1b") {
		t.Fatal("escape codes in the text snapshot")
	}
	for _, title := range []string{"Prefill queueing", "Cache: router vs worker", "KV transfer", "Decode admission",
		"Token cadence", "Restarts & retries"} {
		if !strings.Contains(v, title) {
			t.Errorf("no %q panel in:\n%s", title, v)
		}
	}
	for i, l := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(l); w > 100 {
			t.Fatalf("line %d is %d cells: %q", i, w, l)
		}
	}
}

// TestSnapshotJSONAndNoTarget: --format json gives a JSON document; a run
// where no target answers exits 1 and says which targets failed and why.
func TestSnapshotJSONAndNoTarget(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"snapshot", "demo", "--window", "2s", "--format", "json"}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["schema_version"] != float64(1) {
		t.Fatalf("not a snapshot document (%v):\n%s", err, out.String())
	}
	out.Reset()
	errOut.Reset()
	rc := run([]string{"snapshot", "--worker", "127.0.0.1:1", "--window", "200ms", "--interval", "100ms"}, &out, &errOut)
	if rc != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), "no target answered") ||
		!strings.Contains(errOut.String(), "127.0.0.1:1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", rc, out.String(), errOut.String())
	}
	errOut.Reset()
	if rc := run([]string{"snapshot", "--format", "xml", "--worker", "x:1"}, &out, &errOut); rc == 0 ||
		!strings.Contains(errOut.String(), "--format") {
		t.Fatalf("bad --format: exit %d, %q", rc, errOut.String())
	}
}

// TestNoticeBackendKeepsDetail: the demo's notice wrapper must not hide the
// live backend's drill-down history.
func TestNoticeBackendKeepsDetail(t *testing.T) {
	st := store.New(store.Options{})
	st.SetTargets(time.Now(), []sources.Target{{ID: "w", URL: "http://127.0.0.1:1/metrics", Name: "w", Role: sources.RoleDecode}})
	var b sources.Backend = noticeBackend{Backend: &collect.Live{Store: st}, notice: func() string { return "x" }}
	d, ok := b.(sources.DetailBackend)
	if !ok || d.Detail("w", time.Now(), time.Minute) == nil {
		t.Fatal("the notice wrapper hides the live backend's Detail")
	}
}
