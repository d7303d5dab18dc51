package collect

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/scrape"
)

// TestKeptBodiesAreScrubbed: a hostile target echoes the bearer token it
// was sent into a label and a query token from its URL into another; the
// body kept for a recording carries neither, the parse is unaffected
// otherwise, and without KeepBodies no body is kept at all.
func TestKeptBodiesAreScrubbed(t *testing.T) {
	const token = "s3cr3t-bearer-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		auth := r.Header.Get("Authorization")
		w.Write([]byte("# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{echo=\"" + auth +
			"\",q=\"" + r.URL.Query().Get("key") + "\"} 3\n"))
	}))
	defer srv.Close()
	c, err := scrape.NewClient(config.HTTPClientConfig{BearerToken: config.Secret(token)}, scrape.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sc := New(c, Options{})
	tg := sources.Target{ID: "w", URL: srv.URL + "/metrics?key=qu3ry-k3y", Name: "w", Role: sources.RoleDecode}
	if res := sc.Scrape(context.Background(), tg); res.Raw != nil || res.Obs == nil {
		t.Fatalf("a body kept without KeepBodies: %+v", res)
	}
	sc.KeepBodies(true)
	res := sc.Scrape(context.Background(), tg)
	if res.Err != nil || res.Raw == nil || res.Obs == nil {
		t.Fatalf("%+v", res)
	}
	for _, secret := range []string{token, "qu3ry-k3y"} {
		if bytes.Contains(res.Raw.Body, []byte(secret)) {
			t.Errorf("kept body carries %q:\n%s", secret, res.Raw.Body)
		}
	}
	if !bytes.Contains(res.Raw.Body, []byte("<redacted>")) || !bytes.Contains(res.Raw.Body, []byte("num_running_reqs")) {
		t.Errorf("kept body: %s", res.Raw.Body)
	}
}
