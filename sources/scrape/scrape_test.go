package scrape

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
)

func TestFetchAsksForText004AndReturnsTheBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept"); got != "text/plain;version=0.0.4;q=1,*/*;q=0.1" {
			t.Errorf("Accept = %q", got)
		}
		if got := r.Header.Get("Accept-Encoding"); got != "gzip" {
			t.Errorf("Accept-Encoding = %q", got)
		}
		okHandler(w, r)
	})
	r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL+"/metrics")
	if r.Err != nil || r.Status != 200 || string(r.Body) != metricsBody || len(r.Warnings) != 0 {
		t.Fatalf("response %+v err %v", r, r.Err)
	}
	if r.BytesWire != int64(len(metricsBody)) || r.BytesBody != int64(len(metricsBody)) || r.Duration <= 0 {
		t.Fatalf("bytes wire %d body %d duration %v", r.BytesWire, r.BytesBody, r.Duration)
	}
	if r.ContentType != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("content type %q", r.ContentType)
	}
}

func TestFetchDecompressesGzipAndCountsBothSizes(t *testing.T) {
	plain := strings.Repeat(metricsBody, 200)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(plain))
	zw.Close()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	})
	r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL)
	if r.Err != nil || string(r.Body) != plain {
		t.Fatalf("err %v, body %d bytes", r.Err, len(r.Body))
	}
	if r.BytesWire != int64(gz.Len()) || r.BytesBody != int64(len(plain)) {
		t.Fatalf("wire %d (want %d), body %d (want %d)", r.BytesWire, gz.Len(), r.BytesBody, len(plain))
	}
}

// A gzip bomb (1 GiB of zeros, ~1 MiB on the wire) hits the cap after
// decompression and never costs more than about the cap in memory.
func TestGzipBombHitsTheCap(t *testing.T) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Header().Set("Content-Encoding", "gzip")
		for range 1024 { // concatenated members: 1 GiB decompressed
			if _, err := w.Write(member.Bytes()); err != nil {
				return
			}
		}
	})
	const limit = 8 << 20
	c := newClient(t, config.HTTPClientConfig{}, Options{MaxBodyBytes: limit})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := c.Fetch(context.Background(), srv.URL)
	runtime.ReadMemStats(&after)
	wantErr(t, r, sources.ErrOversize, "body over 8 MiB after decompression")
	if r.BytesBody != limit+1 || r.BytesWire >= 1<<20 {
		t.Fatalf("body %d wire %d", r.BytesBody, r.BytesWire)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("fetch allocated %d MiB for an 8 MiB cap", alloc>>20)
	}
}

func TestOversizePlainBody(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				if chunked {
					w.(http.Flusher).Flush() // no Content-Length
				}
				w.Write([]byte(big))
			})
			r := newClient(t, config.HTTPClientConfig{}, Options{MaxBodyBytes: 1 << 20}).Fetch(context.Background(), srv.URL)
			wantErr(t, r, sources.ErrOversize, "body over 1 MiB")
			if r.BytesBody != 1<<20+1 {
				t.Fatalf("body bytes %d", r.BytesBody)
			}
		})
	}
}

func TestStatusClasses(t *testing.T) {
	tests := []struct {
		status      int
		contentType string
		body        string
		class       sources.ErrorClass
		msg         string
	}{
		{401, "text/plain", "no", sources.ErrAuth, "auth failed — check credentials (HTTP 401)"},
		{403, "text/plain", "no", sources.ErrAuth, "auth failed — check credentials (HTTP 403)"},
		{404, "text/plain", "404 page not found", sources.ErrHTTP4xx, "wrong path? (HTTP 404 for /metrics)"},
		{429, "text/plain", "slow down", sources.ErrHTTP4xx, "rate limited, backing off (HTTP 429)"},
		{400, "text/plain", "bad", sources.ErrHTTP4xx, "HTTP 400 Bad Request"},
		{500, "text/plain", "Traceback", sources.ErrHTTP5xx, "serving?, metrics broken (HTTP 500)"},
		{503, "text/plain", "", sources.ErrHTTP5xx, "unavailable, backing off (HTTP 503)"},
		{502, "text/html", "<html><title>502 Bad\n Gateway</title></html>", sources.ErrHTTP5xx, "serving?, metrics broken (HTTP 502): 502 Bad Gateway"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL+"/metrics")
			wantErr(t, r, tt.class, tt.msg)
			if r.Err.Status != tt.status || r.Status != tt.status {
				t.Fatalf("status %d / %d", r.Err.Status, r.Status)
			}
		})
	}
}

func TestHTMLInsteadOfMetrics(t *testing.T) {
	tests := []struct {
		name, contentType, body, msg string
	}{
		{"by Content-Type", "text/html; charset=utf-8",
			"<!DOCTYPE html><html><head><title>Sign in &middot; SSO</title></head></html>",
			"got HTML (login page?), HTTP 200: Sign in · SSO"},
		{"by the body's first byte", "text/plain", "\n  <html><body>proxy error</body></html>",
			"got HTML (login page?), HTTP 200"},
		{"hostile title is sanitised", "text/html", "<title>\x1b]0;pwned\x07 OK\r\u0085</title>",
			`got HTML (login page?), HTTP 200: \x1b]0;pwned\x07 OK \x85`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.Write([]byte(tt.body))
			})
			r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL)
			wantErr(t, r, sources.ErrHTML, tt.msg)
		})
	}
}

func TestContentTypeWarnings(t *testing.T) {
	tests := []struct{ contentType, warning string }{
		{"text/plain; version=0.0.4; charset=utf-8", ""},
		{"text/plain", ""},
		{"text/plain; version=0.0.4, charset=utf-8", "non-compliant Content-Type"},
		{"", "no Content-Type"},
		{"application/openmetrics-text; version=1.0.0", "target ignores Accept"},
		{"application/json", "unexpected Content-Type"},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{tt.contentType} // "" must stay blank, not sniffed
				w.Write([]byte(metricsBody))
			})
			r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL)
			if r.Err != nil || string(r.Body) != metricsBody {
				t.Fatalf("err %v", r.Err)
			}
			got := strings.Join(r.Warnings, "|")
			if (tt.warning == "") != (got == "") || !strings.Contains(got, tt.warning) {
				t.Fatalf("warnings %q, want %q", got, tt.warning)
			}
			if strings.Contains(got, "charset") || strings.Contains(got, "json") {
				t.Fatalf("warning quotes the header value: %q", got)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	addr := refusedAddr(t)
	r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), "http://"+addr+"/metrics")
	wantErr(t, r, sources.ErrRefused, "connection refused by "+addr)
}

func TestDNSFailure(t *testing.T) {
	c := newClient(t, config.HTTPClientConfig{}, Options{resolver: nxdomainResolver(t)})
	r := c.Fetch(context.Background(), "http://worker-7.pdtop.test:30001/metrics")
	wantErr(t, r, sources.ErrDNS, "no such host worker-7.pdtop.test")
}

// A slowloris body (headers at once, then a line every 20 ms forever) is
// cut by the whole-request deadline; a header timeout alone would not.
func TestTimeoutSlowBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(200)
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
				w.Write([]byte("# still here\n"))
				w.(http.Flusher).Flush()
			}
		}
	})
	r := newClient(t, config.HTTPClientConfig{}, Options{Timeout: 300 * time.Millisecond}).Fetch(context.Background(), srv.URL)
	wantErr(t, r, sources.ErrTimeout, "timed out after 300ms reading the body")
	if r.Status != 200 || r.BytesWire == 0 {
		t.Fatalf("status %d wire %d", r.Status, r.BytesWire)
	}
}

func TestTimeoutSlowHeaders(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	r := newClient(t, config.HTTPClientConfig{}, Options{Timeout: 200 * time.Millisecond}).Fetch(context.Background(), srv.URL)
	wantErr(t, r, sources.ErrTimeout, "waiting for response headers")
}

func TestCallerDeadlineAndCancel(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := newClient(t, config.HTTPClientConfig{}, Options{Timeout: time.Minute})

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r := c.Fetch(ctx, srv.URL)
	wantErr(t, r, sources.ErrTimeout, "waiting for response headers")
	// The message names what was left of the caller's deadline when the
	// fetch began: 200ms less the few ms between WithTimeout and Fetch
	// (more on a loaded CI machine under -race), never the client's minute.
	var ms int
	if _, err := fmt.Sscanf(r.Err.Message, "timed out after %dms", &ms); err != nil || ms < 100 || ms > 200 {
		t.Fatalf("message %q: want 'timed out after N ms' with 100 <= N <= 200 (%v)", r.Err.Message, err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	wantErr(t, c.Fetch(ctx, srv.URL), sources.ErrOther, "scrape canceled")
}

func TestConnectionClosedMidBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n# only ten\n")
		buf.Flush()
	})
	r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL)
	wantErr(t, r, sources.ErrNetwork, "connection closed mid-body")
}

func TestCorruptGzip(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("this is not gzip"))
	})
	r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL)
	wantErr(t, r, sources.ErrOther, "corrupt gzip body")
}

func TestResponseHeadersAreCapped(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Padding", strings.Repeat("p", 100<<10))
		okHandler(w, r)
	})
	r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL)
	wantErr(t, r, sources.ErrOversize, "response headers over 64 KiB")
}

func TestTLSFailuresAreNamed(t *testing.T) {
	tlsSrv := httptestTLS(t)
	expired, expiredCA := expiredTLSServer(t, okHandler)
	plain := serve(t, okHandler)
	tests := []struct {
		name string
		url  string
		tls  config.TLSConfig
		msg  string
	}{
		{"unknown authority", tlsSrv.URL, config.TLSConfig{}, "TLS: certificate signed by unknown authority"},
		{"hostname mismatch", tlsSrv.URL, config.TLSConfig{CA: certPEM(tlsSrv), ServerName: "wrong.example"},
			"TLS: certificate is not valid for wrong.example"},
		{"expired", expired.URL, config.TLSConfig{CA: expiredCA}, "TLS: certificate expired or not yet valid"},
		{"plain http server", strings.Replace(plain.URL, "http://", "https://", 1), config.TLSConfig{},
			"TLS: server speaks plain HTTP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, config.HTTPClientConfig{TLSConfig: tt.tls}, Options{})
			wantErr(t, c.Fetch(context.Background(), tt.url), sources.ErrTLS, tt.msg)
		})
	}
	t.Run("trusted CA works", func(t *testing.T) {
		c := newClient(t, config.HTTPClientConfig{TLSConfig: config.TLSConfig{CA: certPEM(tlsSrv)}}, Options{})
		if r := c.Fetch(context.Background(), tlsSrv.URL); r.Err != nil || string(r.Body) != metricsBody {
			t.Fatalf("err %v", r.Err)
		}
	})
}

func TestRedirectIsNotFollowedByDefault(t *testing.T) {
	var loginHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/login?next=sentinel-location-3c", http.StatusFound)
	})
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		loginHits.Add(1)
		okHandler(w, r)
	})
	srv := serve(t, mux.ServeHTTP)

	r := newClient(t, config.HTTPClientConfig{}, Options{}).Fetch(context.Background(), srv.URL+"/metrics")
	wantErr(t, r, sources.ErrConfig, "HTTP 302 redirect not followed")
	if loginHits.Load() != 0 || r.Status != 302 || strings.Contains(r.Err.Message, "sentinel-location-3c") {
		t.Fatalf("hits %d status %d message %q", loginHits.Load(), r.Status, r.Err.Message)
	}

	// Following can be enabled; it then works on the same host…
	r = newClient(t, config.HTTPClientConfig{FollowRedirects: true}, Options{}).Fetch(context.Background(), srv.URL+"/metrics")
	if r.Err != nil || loginHits.Load() != 1 {
		t.Fatalf("err %v hits %d", r.Err, loginHits.Load())
	}
	// …but credentials are never carried to another host.
	other := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/login", http.StatusFound) // 127.0.0.1 → localhost
	})
	c := newClient(t, config.HTTPClientConfig{FollowRedirects: true, BearerToken: "sentinel-bearer-7f3a"}, Options{})
	r = c.Fetch(context.Background(), strings.Replace(other.URL, "127.0.0.1", "localhost", 1))
	wantErr(t, r, sources.ErrConfig, "redirect to another host not followed")
	if loginHits.Load() != 1 {
		t.Fatalf("cross-host redirect followed with credentials")
	}
}

// The bearer token is sent, and no error message or warning ever contains
// it, nor the URL's userinfo or query, nor a header value — even when the
// server echoes the token back in an error page.
func TestSecretsNeverAppearInMessages(t *testing.T) {
	const (
		token    = "sentinel-bearer-7f3a"
		password = "sentinel-pass-91"
		query    = "sentinel-query-55"
	)
	mux := http.NewServeMux()
	var sawToken atomic.Bool
	check := func(r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+token {
			sawToken.Store(true)
		}
	}
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { check(r); okHandler(w, r) })
	mux.HandleFunc("/401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(500)
		fmt.Fprintf(w, "<title>denied: %s</title>", r.Header.Get("Authorization"))
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<title>%s %s</title>", r.Header.Get("Authorization"), r.URL.RawQuery)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok?token="+token, http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := serve(t, mux.ServeHTTP)

	c := newClient(t, config.HTTPClientConfig{BearerToken: token}, Options{Timeout: 300 * time.Millisecond})
	// URL userinfo takes precedence over the configured token (net/http
	// sets Basic auth first), so fetch both ways.
	withUser := strings.Replace(srv.URL, "http://", "http://admin:"+password+"@", 1)
	var messages []string
	for _, base := range []string{srv.URL, withUser} {
		for _, path := range []string{"/ok", "/401", "/echo", "/html", "/redirect", "/slow", "/missing"} {
			r := c.Fetch(context.Background(), base+path+"?token="+query)
			if r.Err != nil {
				messages = append(messages, r.Err.Message, r.Err.Error())
			}
			messages = append(messages, r.Warnings...)
		}
	}
	r := c.Fetch(context.Background(), "http://admin:"+password+"@"+refusedAddr(t)+"/x?token="+query)
	messages = append(messages, r.Err.Message)
	if !sawToken.Load() {
		t.Fatal("the server never received the bearer token")
	}
	if len(messages) < 6 {
		t.Fatalf("only %d messages: %q", len(messages), messages)
	}
	for _, m := range messages {
		// Every secret starts with "sentinel"; not even a cut-off prefix
		// may show.
		for _, secret := range []string{"sentinel", basicAuth("admin", password)[:8]} {
			if strings.Contains(m, secret) {
				t.Fatalf("message leaks %q: %q", secret, m)
			}
		}
	}
}

func TestCredentialsOverPlainHTTPAreRefused(t *testing.T) {
	bearer := config.HTTPClientConfig{BearerToken: "sentinel-bearer-7f3a"}
	_, err := NewClient(bearer, Options{TargetURL: "http://10.1.2.3:30000/metrics?x=1"})
	if err == nil || !strings.Contains(err.Error(), "refusing to send credentials over plain http to http://10.1.2.3:30000/metrics") ||
		strings.Contains(err.Error(), "sentinel") || strings.Contains(err.Error(), "x=1") {
		t.Fatalf("NewClient error %v", err)
	}
	_, err = NewClient(config.HTTPClientConfig{}, Options{TargetURL: "http://user:pw@10.1.2.3/metrics"})
	if err == nil {
		t.Fatal("userinfo over plain http was accepted")
	}
	for _, ok := range []Options{
		{TargetURL: "http://10.1.2.3:30000/metrics", AllowInsecureCredentials: true},
		{TargetURL: "https://10.1.2.3:30000/metrics"},
		{TargetURL: "http://127.0.0.1:30000/metrics"},
		{TargetURL: "http://localhost:30000/metrics"},
		{TargetURL: "http://[::1]:30000/metrics"},
	} {
		if _, err := NewClient(bearer, ok); err != nil {
			t.Fatalf("%+v: %v", ok, err)
		}
	}
	if _, err := NewClient(config.HTTPClientConfig{}, Options{TargetURL: "http://10.1.2.3/metrics"}); err != nil {
		t.Fatalf("no credentials: %v", err)
	}
	// Fetch enforces the rule for every URL, before dialling.
	c := newClient(t, bearer, Options{})
	wantErr(t, c.Fetch(context.Background(), "http://192.0.2.1:9/metrics"), sources.ErrConfig, "refusing to send credentials")
}

func TestInvalidConfigAndURLs(t *testing.T) {
	_, err := NewClient(config.HTTPClientConfig{BearerToken: "sentinel-bearer-7f3a", BearerTokenFile: "/tmp/x"}, Options{})
	if err == nil || strings.Contains(err.Error(), "sentinel") {
		t.Fatalf("error %v", err)
	}
	_, err = NewClient(config.HTTPClientConfig{Authorization: &config.Authorization{CredentialsRef: "vault"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "secret manager") {
		t.Fatalf("error %v", err)
	}
	c := newClient(t, config.HTTPClientConfig{}, Options{})
	for _, u := range []string{"", "::bad", "ftp://host/metrics", "http:///metrics?token=sentinel"} {
		r := c.Fetch(context.Background(), u)
		if r.Err == nil || r.Err.Class != sources.ErrConfig || strings.Contains(r.Err.Message, "sentinel") {
			t.Fatalf("%q: %+v", u, r.Err)
		}
	}
}

func TestBasicAuthIsSent(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "pdtop" || p != "sentinel-pass-91" {
			w.WriteHeader(401)
			return
		}
		okHandler(w, r)
	})
	c := newClient(t, config.HTTPClientConfig{BasicAuth: &config.BasicAuth{Username: "pdtop", Password: "sentinel-pass-91"}}, Options{})
	if r := c.Fetch(context.Background(), srv.URL); r.Err != nil {
		t.Fatalf("err %v", r.Err)
	}
}
