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
		"Token cadence", "Restarts & retries", "Capacity in units of work", "requests/s: offered"} {
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

// TestTimeoutLongerThanIntervalIsRefused: the flags follow the config
// file's rule (a scrape must end before the next one starts), for the
// dashboard, the demo and the snapshot, before anything is scraped.
func TestTimeoutLongerThanIntervalIsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"snapshot", "--prefill", "127.0.0.1:1", "--timeout", "5s", "--window", "3s"},
		{"snapshot", "demo", "--timeout", "2s", "--interval", "1s"},
		{"--prefill", "127.0.0.1:1", "--timeout", "1500ms"},
		{"demo", "--interval", "500ms", "--timeout", "600ms"},
	} {
		var out, errOut bytes.Buffer
		rc := run(args, &out, &errOut)
		if rc != 1 || !strings.Contains(errOut.String(), "is longer than --interval") {
			t.Errorf("%v: exit %d, stderr %q", args, rc, errOut.String())
		}
	}
	// The default never exceeds a short interval.
	v := viewFlags{interval: 200 * time.Millisecond, window: time.Second}
	if err := v.validate(); err != nil || v.timeout != 200*time.Millisecond {
		t.Errorf("default timeout for a 200ms interval: %v (%v)", v.timeout, err)
	}
}

// TestTargetsBehindOneProxyGetDistinctNames: two workers at one host:port
// (a proxy routing by path) are told apart by their path.
func TestTargetsBehindOneProxyGetDistinctNames(t *testing.T) {
	tf := targetFlags{prefill: urlList{"http://127.0.0.1:8080/p0/metrics", "http://127.0.0.1:8080/p1/metrics"},
		decode: urlList{"http://127.0.0.1:9090"}}
	f := &fleet{}
	if err := tf.addTo(f); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range f.targets {
		names = append(names, tg.Name)
	}
	want := []string{"127.0.0.1:8080/p0/metrics", "127.0.0.1:8080/p1/metrics", "127.0.0.1:9090"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("names %q, want %q", names, want)
	}
}
