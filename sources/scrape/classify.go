package scrape

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pdtop/pdtop/sources"
)

// maxMessageCells bounds a ScrapeError message or warning.
const maxMessageCells = 200

// statusError classifies a non-2xx response. peek is the start of its
// (decompressed) body, used only for an HTML <title>.
// follow says whether the client follows redirects at all; a 3xx that
// reaches here was not followed either way.
func statusError(res *http.Response, u *url.URL, peek []byte, follow bool, scrub func(string) string) *sources.ScrapeError {
	code := res.StatusCode
	se := &sources.ScrapeError{Status: code}
	status := "HTTP " + strconv.Itoa(code)
	switch {
	case code >= 300 && code < 400:
		se.Class = sources.ErrConfig
		where, why := "", "redirects are off for scrape targets"
		if crossHost(res) {
			where = " to another host"
		}
		if follow {
			why = "credentials never leave their host or go over plain http"
		}
		se.Message = status + " redirect" + where + " not followed (" + why + "); point the target at the final URL"
		return se
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		se.Class = sources.ErrAuth
		se.Message = "auth failed — check credentials (" + status + ")"
		return se
	case code == http.StatusNotFound:
		se.Class = sources.ErrHTTP4xx
		se.Message = "wrong path? (" + status + " for " + u.EscapedPath() + ")"
	case code == http.StatusTooManyRequests:
		se.Class = sources.ErrHTTP4xx
		se.Message = "rate limited, backing off (" + status + ")"
	case code == http.StatusServiceUnavailable:
		se.Class = sources.ErrHTTP5xx
		se.Message = "unavailable, backing off (" + status + ")"
	case code >= 500:
		se.Class = sources.ErrHTTP5xx
		se.Message = "serving?, metrics broken (" + status + ")"
	case code >= 400:
		se.Class = sources.ErrHTTP4xx
		se.Message = status + " " + http.StatusText(code)
	default: // 1xx that is not an interim response, or a code out of range
		se.Class = sources.ErrOther
		se.Message = "unexpected " + status
	}
	if isHTML(res.Header.Get("Content-Type"), peek) {
		se.Message += withTitle(peek, scrub)
	}
	return se
}

// classify turns a transport or body-read error into a ScrapeError. The
// message is built from the error's kind, never from its text, except for
// the last-resort network case, whose text is scrubbed and sanitised.
func (c *Client) classify(err error, parent, ctx context.Context, ph phase, u *url.URL, read int64, limit time.Duration) *sources.ScrapeError {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text embeds the full URL
	}
	host := u.Host
	fail := func(class sources.ErrorClass, msg string) *sources.ScrapeError {
		return &sources.ScrapeError{Class: class, Message: msg}
	}

	if parent.Err() != nil && errors.Is(parent.Err(), context.Canceled) {
		return fail(sources.ErrOther, "scrape canceled")
	}
	if errors.Is(err, errRedirectLimit) {
		return fail(sources.ErrConfig, "more than "+strconv.Itoa(maxRedirects)+" redirects")
	}
	if errors.Is(err, errBadGzip) {
		return fail(sources.ErrOther, "corrupt gzip body")
	}
	if errors.Is(err, errEncoding) {
		return fail(sources.ErrOther, "unsupported Content-Encoding (asked for gzip or none)")
	}
	var ge *guardError
	if errors.As(err, &ge) {
		return fail(sources.ErrConfig, ge.msg)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && !dnsErr.IsTimeout {
		if dnsErr.IsNotFound {
			return fail(sources.ErrDNS, "no such host "+u.Hostname())
		}
		return fail(sources.ErrDNS, "DNS lookup failed for "+u.Hostname())
	}
	if isTimeout(err) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		after := "timed out after " + limit.String()
		switch ph {
		case phaseConnect:
			return fail(sources.ErrTimeout, after+" connecting to "+host)
		case phaseHeaders:
			return fail(sources.ErrTimeout, after+" waiting for response headers")
		default:
			return fail(sources.ErrTimeout, after+" reading the body ("+formatBytes(read)+" so far)")
		}
	}
	if se := tlsError(err, u); se != nil {
		return se
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fail(sources.ErrRefused, "connection refused by "+host)
	case errors.Is(err, syscall.ECONNRESET):
		return fail(sources.ErrNetwork, "connection reset by "+host)
	case errors.Is(err, syscall.EHOSTUNREACH):
		return fail(sources.ErrNetwork, "no route to "+host)
	case errors.Is(err, syscall.ENETUNREACH):
		return fail(sources.ErrNetwork, "network unreachable for "+host)
	case strings.Contains(err.Error(), "server response headers exceeded"):
		return fail(sources.ErrOversize, "response headers over "+formatBytes(MaxHeaderBytes))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		if ph == phaseBody {
			return fail(sources.ErrNetwork, "connection closed mid-body ("+formatBytes(read)+" read)")
		}
		return fail(sources.ErrNetwork, "connection closed by "+host+" before a response")
	}
	return fail(sources.ErrNetwork, "network error: "+err.Error())
}

// isTimeout reports whether err is a deadline or timeout of any layer.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// tlsError names a TLS failure, or returns nil when err is not one.
func tlsError(err error, u *url.URL) *sources.ScrapeError {
	fail := func(msg string) *sources.ScrapeError {
		return &sources.ScrapeError{Class: sources.ErrTLS, Message: "TLS: " + msg}
	}
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		return fail("certificate signed by unknown authority (set tls_config.ca_file?)")
	case errors.As(err, &hostname):
		host := hostname.Host
		if host == "" {
			host = u.Hostname()
		}
		return fail("certificate is not valid for " + host + " (check the URL host or tls_config.server_name)")
	case errors.As(err, &invalid):
		switch invalid.Reason {
		case x509.Expired:
			return fail("certificate expired or not yet valid")
		case x509.NotAuthorizedToSign:
			return fail("certificate signed by a certificate that is not a CA")
		case x509.IncompatibleUsage:
			return fail("certificate not valid for server authentication")
		}
		return fail("invalid certificate")
	case errors.As(err, &record):
		return fail("server did not answer with TLS (is it plain http?)")
	case errors.As(err, &alert):
		return fail("handshake failed: " + alert.Error())
	case errors.As(err, &verify):
		return fail("certificate verification failed")
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fail("server speaks plain HTTP (use http://)")
	case strings.Contains(err.Error(), "tls: "):
		return fail("handshake failed")
	}
	return nil
}

// scrubber returns a function that replaces, in a message, the raw URL,
// its userinfo (also as a Basic credential), query and fragment, and every
// configured inline secret. It must run before any truncation, so that no
// prefix of a secret survives.
func (c *Client) scrubber(rawURL string) func(string) string {
	secrets := c.secretsFor(rawURL)
	return func(msg string) string { return scrubAll(msg, secrets) }
}

// secretsFor is every value scrubbed for rawURL: the client's inline
// secrets, the URL itself, its userinfo (also as a Basic credential),
// query and fragment.
func (c *Client) secretsFor(rawURL string) []string {
	secrets := c.secrets
	if u, err := url.Parse(strings.TrimSpace(rawURL)); err == nil {
		extra := []string{strings.TrimSpace(rawURL), u.RawQuery, u.Fragment}
		if u.User != nil {
			extra = append(extra, u.User.String(), u.User.Username())
			if p, ok := u.User.Password(); ok {
				extra = append(extra, p, basicAuth(u.User.Username(), p))
			}
		}
		for _, v := range u.Query() {
			extra = append(extra, v...)
		}
		secrets = append(append([]string(nil), secrets...), extra...)
	}
	return secrets
}

// basicAuth is the credential an Authorization: Basic header carries.
func basicAuth(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}

// scrubAll replaces every occurrence of each secret (of at least 4 bytes)
// in msg.
func scrubAll(msg string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}

// Scrub replaces the client's inline secrets, and the userinfo and query
// values of rawURL, in s: for text a target sent back that pdtop shows,
// such as a parse problem's excerpt (a hostile target can echo the
// credentials it was sent).
func (c *Client) Scrub(s, rawURL string) string { return c.scrubber(rawURL)(s) }
