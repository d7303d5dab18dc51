package scrape

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"html"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pdtop/pdtop/sources"
	"github.com/pdtop/pdtop/sources/sanitize"
)

// Response is the outcome of one Fetch.
type Response struct {
	// Body is the decompressed body; nil unless the fetch succeeded.
	Body []byte
	// Status is the HTTP status code; 0 when no response arrived.
	Status int
	// ContentType is the response's Content-Type, sanitised and cut to
	// 120 cells; "" when absent.
	ContentType string
	// BytesWire is the body bytes read off the network (compressed when
	// the target sent gzip); BytesBody is after decompression. On an
	// oversize failure BytesBody is one more than the cap.
	BytesWire int64
	BytesBody int64
	// Duration is the wall time of the whole fetch.
	Duration time.Duration
	// Err is the classified failure; nil on success.
	Err *sources.ScrapeError
	// Warnings are non-fatal findings on a successful fetch, e.g. a
	// non-compliant Content-Type; one sanitised line each.
	Warnings []string
}

// Fetch GETs rawURL with one deadline (Options.Timeout, or ctx's if
// earlier) over connect, headers and the whole body, and returns the body
// or a classified error. It never panics and never returns an error
// message containing the URL's userinfo or query, a header value or a
// configured secret. Cancelling ctx aborts the fetch (ErrOther,
// "canceled").
func (c *Client) Fetch(ctx context.Context, rawURL string) (resp Response) {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	scrub := c.scrubber(rawURL)
	defer func() {
		resp.Duration = time.Since(start)
		if resp.Err != nil {
			resp.Body = nil
			resp.Err.Message = sanitize.Truncate(scrub(resp.Err.Message), maxMessageCells)
		}
		for i, w := range resp.Warnings {
			resp.Warnings[i] = sanitize.Truncate(scrub(w), maxMessageCells)
		}
	}()

	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Host == "" {
		resp.Err = &sources.ScrapeError{Class: sources.ErrConfig, Message: "invalid URL (need scheme://host:port/path)"}
		return resp
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		resp.Err = &sources.ScrapeError{Class: sources.ErrConfig, Message: "unsupported URL scheme " + strconv.Quote(u.Scheme) + " (use http or https)"}
		return resp
	}
	if se := c.checkCredentials(u); se != nil {
		resp.Err = se
		return resp
	}

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	limit := c.timeout // the deadline in force, for timeout messages
	if d, ok := ctx.Deadline(); ok && d.Sub(start) < limit {
		limit = d.Sub(start).Round(time.Millisecond)
	}
	var ph atomic.Int32 // phase, for timeout messages
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { ph.Store(int32(phaseHeaders)) },
		GotFirstResponseByte: func() { ph.Store(int32(phaseHeaders)) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		resp.Err = &sources.ScrapeError{Class: sources.ErrConfig, Message: "invalid URL " + sources.DisplayURL(u.String())}
		return resp
	}
	req.Header.Set("Accept", Accept)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("User-Agent", "pdtop")

	res, err := c.http.Do(req)
	if err != nil {
		resp.Err = c.classify(err, parent, ctx, phase(ph.Load()), u, 0, limit)
		return resp
	}
	defer res.Body.Close()
	ph.Store(int32(phaseBody))
	resp.Status = res.StatusCode
	resp.ContentType = sanitize.Truncate(res.Header.Get("Content-Type"), 120)
	wire := &countingReader{r: res.Body}
	defer func() { resp.BytesWire = wire.n }()

	if res.StatusCode < 200 || res.StatusCode > 299 {
		// Read a little for an HTML <title> and so the connection can be
		// reused; the body of an error response is never returned.
		peek, _ := io.ReadAll(io.LimitReader(c.decoder(res, wire), 64<<10))
		resp.Err = statusError(res, u, peek, c.follow, scrub)
		return resp
	}

	body, n, err := c.readBody(res, wire)
	resp.BytesBody = n
	switch {
	case errors.Is(err, errTooLarge):
		resp.Err = &sources.ScrapeError{Class: sources.ErrOversize, Status: res.StatusCode,
			Message: "body over " + formatBytes(c.maxBody) + " after decompression"}
		return resp
	case err != nil:
		resp.Err = c.classify(err, parent, ctx, phaseBody, u, n, limit)
		resp.Err.Status = res.StatusCode
		return resp
	}
	if isHTML(res.Header.Get("Content-Type"), body) {
		resp.Err = &sources.ScrapeError{Class: sources.ErrHTML, Status: res.StatusCode,
			Message: "got HTML (login page?), HTTP " + strconv.Itoa(res.StatusCode) + withTitle(body, scrub)}
		return resp
	}
	if w := contentTypeWarning(res.Header.Get("Content-Type")); w != "" {
		resp.Warnings = append(resp.Warnings, w)
	}
	resp.Body = body
	return resp
}

// phase is how far a request got, for timeout messages.
type phase int32

const (
	phaseConnect phase = iota
	phaseHeaders
	phaseBody
)

var errTooLarge = errors.New("body too large")

// decoder returns the body reader, gunzipping when the target sent gzip.
// A broken gzip header yields a reader that returns the error.
func (c *Client) decoder(res *http.Response, wire io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding"))) {
	case "", "identity":
		return wire
	case "gzip", "x-gzip":
		gz, err := gzip.NewReader(wire)
		if err != nil {
			return errReader{errBadGzip}
		}
		return gz
	}
	return errReader{errEncoding}
}

var (
	errBadGzip  = errors.New("bad gzip body")
	errEncoding = errors.New("unsupported Content-Encoding")
)

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// readBody reads the (decompressed) body up to the cap; it returns
// errTooLarge, with n = cap+1, as soon as the cap is passed, so a gzip
// bomb costs at most the cap in memory.
func (c *Client) readBody(res *http.Response, wire io.Reader) ([]byte, int64, error) {
	r := c.decoder(res, wire)
	size := int64(64 << 10)
	if r == wire && res.ContentLength > 0 {
		if res.ContentLength > c.maxBody {
			return nil, c.maxBody + 1, errTooLarge
		}
		size = res.ContentLength + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(size, c.maxBody+1)))
	n, err := buf.ReadFrom(io.LimitReader(r, c.maxBody+1))
	if n > c.maxBody {
		return nil, n, errTooLarge
	}
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
		err = errBadGzip
	}
	return buf.Bytes(), n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// crossHost reports whether a redirect response points to another host.
func crossHost(res *http.Response) bool {
	loc, err := res.Location()
	if err != nil || res.Request == nil {
		return false
	}
	return !strings.EqualFold(loc.Hostname(), res.Request.URL.Hostname())
}

// isHTML reports whether a response is an HTML page: by Content-Type, or
// by a body whose first non-blank byte is '<' (no exposition line starts
// with it).
func isHTML(contentType string, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil &&
		(mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '<'
}

// withTitle returns ": <title>" for an HTML body with a title, scrubbed,
// sanitised and cut to at most 60 cells, or "".
func withTitle(body []byte, scrub func(string) string) string {
	t := htmlTitle(body)
	if t == "" {
		return ""
	}
	return ": " + sanitize.Truncate(scrub(t), 60)
}

// htmlTitle extracts the text of the first <title> element (unescaped,
// HTML whitespace collapsed as a browser does; every other control
// character is left for sanitize to show).
func htmlTitle(body []byte) string {
	if len(body) > 64<<10 {
		body = body[:64<<10]
	}
	lower := bytes.ToLower(body)
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		end = min(len(body)-start, 200)
	}
	t := html.UnescapeString(string(body[start : start+end]))
	words := strings.FieldsFunc(t, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
	})
	return strings.Join(words, " ")
}

// contentTypeWarning returns a warning for a Content-Type that is not
// text 0.0.4 (the body is parsed as text anyway), or "".
func contentTypeWarning(ct string) string {
	if strings.TrimSpace(ct) == "" {
		return "no Content-Type (parsed as text 0.0.4)"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "non-compliant Content-Type (parsed as text 0.0.4)"
	}
	switch mt {
	case "text/plain":
		if v, ok := params["version"]; ok && v != "0.0.4" {
			return "unexpected text format version (parsed as 0.0.4)"
		}
		return ""
	case "application/openmetrics-text":
		return "target ignores Accept (OpenMetrics Content-Type)"
	}
	return "unexpected Content-Type (parsed as text 0.0.4)"
}

// formatBytes renders a byte count for messages ("32 MiB", "1500 B").
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
