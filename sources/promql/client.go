package promql

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sanitize"
)

// DefaultMaxResponseBytes caps one API response body (64 MiB).
const DefaultMaxResponseBytes int64 = 64 << 20

// maxQueryCells bounds how much of a failing query is shown on screen.
const maxQueryCells = 240

// errTooLarge is returned by the body reader past the cap.
var errTooLarge = errors.New("response over the size cap")

// statusKey carries a *int into the round-tripper, which records the
// HTTP status there: client_golang's API drops the response, and the
// status decides between "bad query", "overloaded" and "auth".
type statusKey struct{}

// capTransport records each response's status and caps its body.
type capTransport struct {
	next http.RoundTripper
	max  int64
}

func (t *capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if p, ok := req.Context().Value(statusKey{}).(*int); ok {
		*p = res.StatusCode
	}
	res.Body = &capBody{ReadCloser: res.Body, left: t.max}
	return res, nil
}

type capBody struct {
	io.ReadCloser
	left int64
}

func (b *capBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

// client runs queries against one server and turns every failure into a
// classified, sanitised sources.ScrapeError.
type client struct {
	api     v1.API
	display string // scheme://host:port/path of the server, for messages
	timeout time.Duration
	sem     chan struct{}

	mu       sync.Mutex
	warnings []string                 // collected during the current job
	took     map[string]time.Duration // last duration per query name
}

func newClient(rawURL string, hc *http.Client, maxBytes int64, timeout time.Duration, concurrency int) (*client, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	wrapped := &http.Client{Transport: &capTransport{next: hc.Transport, max: maxBytes}, CheckRedirect: hc.CheckRedirect}
	if wrapped.Transport.(*capTransport).next == nil {
		wrapped.Transport.(*capTransport).next = http.DefaultTransport
	}
	c, err := api.NewClient(api.Config{Address: rawURL, Client: wrapped})
	if err != nil {
		return nil, err
	}
	if concurrency <= 0 {
		concurrency = 8
	}
	return &client{api: v1.NewAPI(c), display: sources.DisplayURL(rawURL), timeout: timeout,
		sem: make(chan struct{}, concurrency)}, nil
}

// queryFailure is a failed query: the classified error and which query.
type queryFailure struct {
	name  string
	query string
	err   *sources.ScrapeError
}

// instant runs one instant query at ts.
func (c *client) instant(ctx context.Context, name, q string, ts time.Time) (model.Vector, *queryFailure) {
	var out model.Vector
	f := c.do(ctx, name, q, func(ctx context.Context) (model.Value, v1.Warnings, error) {
		v, w, _, err := c.api.Query(ctx, q, ts, v1.WithTimeout(c.timeout))
		return v, w, err
	}, func(v model.Value) bool {
		switch x := v.(type) {
		case model.Vector:
			out = x
			return true
		case *model.Scalar:
			out = model.Vector{&model.Sample{Value: x.Value, Timestamp: x.Timestamp}}
			return true
		}
		return false
	})
	return out, f
}

// samples runs an instant query whose result is raw samples (a range
// selector), e.g. to measure the scrape interval.
func (c *client) samples(ctx context.Context, name, q string, ts time.Time) (model.Matrix, *queryFailure) {
	return c.matrix(ctx, name, q, func(ctx context.Context) (model.Value, v1.Warnings, error) {
		v, w, _, err := c.api.Query(ctx, q, ts, v1.WithTimeout(c.timeout))
		return v, w, err
	})
}

// series runs one range query.
func (c *client) series(ctx context.Context, name, q string, r v1.Range) (model.Matrix, *queryFailure) {
	return c.matrix(ctx, name, q, func(ctx context.Context) (model.Value, v1.Warnings, error) {
		v, w, _, err := c.api.QueryRange(ctx, q, r, v1.WithTimeout(c.timeout))
		return v, w, err
	})
}

// matrix runs a query whose answer must be a matrix.
func (c *client) matrix(ctx context.Context, name, q string, run func(context.Context) (model.Value, v1.Warnings, error)) (model.Matrix, *queryFailure) {
	var out model.Matrix
	f := c.do(ctx, name, q, run, func(v model.Value) bool {
		m, ok := v.(model.Matrix)
		out = m
		return ok
	})
	return out, f
}

func (c *client) do(ctx context.Context, name, q string, run func(context.Context) (model.Value, v1.Warnings, error), take func(model.Value) bool) *queryFailure {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return &queryFailure{name: name, query: q, err: &sources.ScrapeError{Class: sources.ErrTimeout,
			Message: "no query slot before the deadline (the server is slow)"}}
	}
	defer func() { <-c.sem }()
	status := 0
	qctx := context.WithValue(ctx, statusKey{}, &status)
	t0 := time.Now()
	v, warnings, err := run(qctx)
	c.mu.Lock()
	if c.took == nil {
		c.took = map[string]time.Duration{}
	}
	c.took[name] = time.Since(t0)
	c.mu.Unlock()
	for _, w := range warnings {
		c.warn(name + ": " + w)
	}
	if err == nil && !take(v) {
		err = &v1.Error{Type: v1.ErrBadResponse, Msg: "unexpected result type " + valueType(v)}
	}
	if err == nil {
		return nil
	}
	return &queryFailure{name: name, query: q, err: c.classify(ctx, err, status, name, q)}
}

func valueType(v model.Value) string {
	if v == nil {
		return "none"
	}
	return v.Type().String()
}

func (c *client) warn(w string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.warnings) < 20 {
		c.warnings = append(c.warnings, sanitize.Truncate(sanitize.Text(w), 200))
	}
}

// durations returns the last duration of each query by name.
func (c *client) durations() map[string]time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]time.Duration, len(c.took))
	for k, v := range c.took {
		out[k] = v
	}
	return out
}

// takeWarnings returns and clears the warnings collected so far.
func (c *client) takeWarnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.warnings
	c.warnings = nil
	return w
}

// classify names a failure the way target failures are named (the
// classes of sources.ErrorClass), with the query shown for a bad one.
func (c *client) classify(ctx context.Context, err error, status int, name, q string) *sources.ScrapeError {
	fail := func(class sources.ErrorClass, code int, msg string) *sources.ScrapeError {
		return &sources.ScrapeError{Class: class, Status: code, Message: sanitize.Truncate(sanitize.Text(msg), 400)}
	}
	var ae *v1.Error
	if errors.As(err, &ae) {
		msg := ae.Msg
		switch {
		case ae.Type == v1.ErrBadData || ae.Type == v1.ErrExec || status == 400 || status == 422:
			if status == 0 {
				status = 400
				if ae.Type == v1.ErrExec {
					status = 422
				}
			}
			return fail(ErrQuery, status, "bad query "+name+": "+msg+" — query: "+sanitize.Truncate(oneLine(q), maxQueryCells))
		case ae.Type == v1.ErrTimeout || status == 503:
			return fail(sources.ErrHTTP5xx, 503, "Prometheus overloaded or the query timed out on the server (HTTP 503: "+msg+"); backing off")
		case ae.Type == v1.ErrCanceled:
			return fail(sources.ErrTimeout, status, "query canceled by the server ("+msg+")")
		case status == 401 || status == 403:
			return fail(sources.ErrAuth, status, "auth failed — check the Prometheus credentials (HTTP "+strconv.Itoa(status)+")")
		case status == 404:
			return fail(sources.ErrHTTP4xx, status, "no Prometheus API at "+c.display+" (HTTP 404: wrong URL or path prefix?)")
		case status == 429:
			return fail(sources.ErrHTTP4xx, status, "rate limited by the server (HTTP 429); backing off")
		case status >= 500:
			return fail(sources.ErrHTTP5xx, status, "server error (HTTP "+strconv.Itoa(status)+")")
		case status >= 400:
			return fail(sources.ErrHTTP4xx, status, "HTTP "+strconv.Itoa(status)+" "+http.StatusText(status))
		case ae.Type == v1.ErrBadResponse:
			if errors.Is(err, errTooLarge) || strings.Contains(msg, errTooLarge.Error()) {
				return fail(sources.ErrOversize, status, name+": response over the size cap")
			}
			return fail(sources.ErrParse, status, "not a Prometheus API response ("+msg+")")
		}
		return fail(sources.ErrOther, status, name+": "+msg)
	}
	if errors.Is(err, errTooLarge) {
		return fail(sources.ErrOversize, status, name+": response over the size cap")
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || isTimeout(err) {
		return fail(sources.ErrTimeout, 0, name+": no answer before the deadline (a large fleet? the recording rules of 'pdtop rules' make pool and chart queries cheap)")
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && !dnsErr.IsTimeout {
		return fail(sources.ErrDNS, 0, "DNS lookup failed for "+hostOf(c.display))
	}
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr):
		return fail(sources.ErrTLS, 0, "TLS certificate not accepted for "+hostOf(c.display))
	case errors.As(err, &recErr):
		return fail(sources.ErrTLS, 0, "TLS handshake failed (is the server plain http?)")
	case errors.Is(err, syscall.ECONNREFUSED):
		return fail(sources.ErrRefused, 0, "connection refused by "+hostOf(c.display))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text embeds the full URL
	}
	return fail(sources.ErrNetwork, 0, "network error talking to "+hostOf(c.display)+": "+err.Error())
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func hostOf(display string) string {
	if u, err := url.Parse(display); err == nil && u.Host != "" {
		return u.Host
	}
	return display
}

// oneLine collapses whitespace runs so a query fits on one line.
func oneLine(q string) string { return strings.Join(strings.Fields(q), " ") }

// Error classes specific to a query server (sources.ErrorClass values).
const (
	// ErrQuery is a query the server rejected (HTTP 400 bad parameters or
	// 422 cannot be executed); the message shows the query.
	ErrQuery sources.ErrorClass = "query"
	// ErrPartial is a successful answer that carried warnings: the figures
	// may be incomplete.
	ErrPartial sources.ErrorClass = "partial"
)
