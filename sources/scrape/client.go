// Package scrape fetches one Prometheus /metrics body over HTTP(S) and
// classifies every way that can fail (robustness.md §1, §3 rows 24–32,
// §6). It knows HTTP and the exposition format's content negotiation,
// nothing about SGLang.
//
// A Client asks for text format 0.0.4 only (never OpenMetrics, whose Go
// decoder is far too slow for network input), applies one deadline to the
// whole request including the body, decompresses gzip itself so the body
// cap applies after decompression, never follows redirects unless told to,
// refuses to send credentials over plain http to another machine, and
// turns failures into a sources.ScrapeError whose message is one sanitised
// line with no userinfo, query string, header value or secret in it.
package scrape

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
)

// Defaults applied when an Options field is zero.
const (
	// DefaultTimeout is the deadline over connect, headers and body.
	DefaultTimeout = 5 * time.Second
	// DefaultMaxBodyBytes caps the body after decompression (32 MiB).
	DefaultMaxBodyBytes int64 = 32 << 20
	// MaxHeaderBytes caps the response headers (64 KiB).
	MaxHeaderBytes = 64 << 10
	// Accept is the only Accept header pdtop sends (like vmagent): text
	// 0.0.4, anything else at low priority, never OpenMetrics, never
	// escaping=allow-utf-8.
	Accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"
	// maxRedirects bounds redirects when following them is enabled.
	maxRedirects = 5
)

// Options tune a Client. The zero value uses the defaults.
type Options struct {
	// Timeout is one deadline over connect, TLS handshake, response
	// headers and the whole body read; 0 (or less) means DefaultTimeout.
	// Keep it below the refresh interval.
	Timeout time.Duration
	// MaxBodyBytes caps the body after decompression, in bytes; 0 (or
	// less) means DefaultMaxBodyBytes. A larger body is an ErrOversize
	// failure, never a truncated success.
	MaxBodyBytes int64
	// AllowInsecureCredentials allows sending credentials (authorization,
	// basic auth, OAuth2, secret headers, URL userinfo) over plain http to
	// a host that is not loopback. Off by default (robustness.md §6.5).
	AllowInsecureCredentials bool
	// TargetURL, when set, is the metrics URL the client is built for:
	// NewClient then refuses a configuration that would send credentials
	// over plain http to it. Fetch checks every URL it is given anyway.
	TargetURL string

	// Resolver, when set, replaces the system DNS resolver (tests use it
	// to stay hermetic).
	Resolver *net.Resolver
	// DialGuard, when set, is called with every IP address the client is
	// about to connect to (after DNS resolution, on every dial, so a DNS
	// answer that changes between checks is caught too). A non-nil error
	// aborts the connection; the scrape fails with ErrConfig and the
	// error's text, which must carry no secret. Discovered targets use it
	// to refuse link-local and cloud-metadata addresses (robustness.md
	// §6.6).
	DialGuard func(ip netip.Addr) error

	// resolver replaces the system DNS resolver (tests use it to stay
	// hermetic).
	resolver *net.Resolver
}

// Client fetches metrics bodies. It is safe for concurrent use; share one
// per distinct HTTP configuration.
type Client struct {
	http          *http.Client
	timeout       time.Duration
	maxBody       int64
	hasCreds      bool
	allowInsecure bool
	follow        bool
	secrets       []string // inline secret values, scrubbed from every message
}

// NewClient builds a client from a Prometheus-style HTTP configuration:
// authorization / bearer_token(_file), basic_auth, oauth2, tls_config
// (ca, cert, key, server_name, insecure_skip_verify, min/max_version;
// files are re-read when they change), proxy settings and http_headers.
// FollowRedirects is honoured as given; note that the zero
// HTTPClientConfig does not follow redirects, which is the right default
// for scrape targets, while config.DefaultHTTPClientConfig does.
//
// It returns an error for an invalid configuration, for secret *_ref
// fields (no secret manager), and for credentials over plain http to a
// non-loopback Options.TargetURL unless AllowInsecureCredentials is set.
// Error messages never contain secret values.
func NewClient(cfg config.HTTPClientConfig, opt Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, errors.New("invalid HTTP client config: " + scrubAll(err.Error(), secretsOf(&cfg)))
	}
	if refs := refFields(&cfg); refs != "" {
		return nil, errors.New("invalid HTTP client config: " + refs + " needs a secret manager, which pdtop does not have")
	}
	c := &Client{
		timeout:       opt.Timeout,
		maxBody:       opt.MaxBodyBytes,
		hasCreds:      hasCredentials(&cfg),
		allowInsecure: opt.AllowInsecureCredentials,
		follow:        cfg.FollowRedirects,
		secrets:       secretsOf(&cfg),
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBodyBytes
	}
	if opt.TargetURL != "" {
		u, err := url.Parse(strings.TrimSpace(opt.TargetURL))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, errors.New("invalid target URL " + sources.DisplayURL(opt.TargetURL))
		}
		if se := c.checkCredentials(u); se != nil {
			return nil, errors.New(se.Message)
		}
	}
	rt, err := c.roundTripper(cfg, opt)
	if err != nil {
		return nil, errors.New("invalid HTTP client config: " + scrubAll(err.Error(), c.secrets))
	}
	c.http = &http.Client{Transport: rt, CheckRedirect: c.checkRedirect}
	return c, nil
}

// HTTPClient returns the underlying net/http client: its transport carries
// the configured credentials, TLS and proxy settings, and its redirect
// policy is the one described at NewClient. It is for callers that speak
// another protocol to the same kind of endpoint (sources/promql talks to
// the Prometheus HTTP API with it); they bring their own deadline and
// body cap.
func (c *Client) HTTPClient() *http.Client { return c.http }

// CloseIdleConnections closes kept-alive connections that are idle.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// roundTripper builds our own transport (prometheus/common's has no
// response-header timeout and no header-size cap) and wraps it in
// prometheus/common's exported credential round-trippers, in the order
// NewRoundTripperFromConfig uses. Those round-trippers drop credentials on
// cross-host redirects (prometheus/common#901, #924).
func (c *Client) roundTripper(cfg config.HTTPClientConfig, opt Options) (http.RoundTripper, error) {
	ctx := context.Background()
	res := opt.resolver
	if opt.Resolver != nil {
		res = opt.Resolver
	}
	dialer := &net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second, Resolver: res}
	if g := opt.DialGuard; g != nil {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &guardError{msg: "blocked: unparsable address"}
			}
			if err := g(ap.Addr().Unmap()); err != nil {
				return &guardError{msg: err.Error()}
			}
			return nil
		}
	}
	newRT := func(tlsConfig *tls.Config) (http.RoundTripper, error) {
		var rt http.RoundTripper = &http.Transport{
			Proxy:                  cfg.Proxy(),
			ProxyConnectHeader:     cfg.GetProxyConnectHeader(),
			DialContext:            dialer.DialContext,
			TLSClientConfig:        tlsConfig,
			TLSHandshakeTimeout:    c.timeout,
			ResponseHeaderTimeout:  c.timeout,
			MaxResponseHeaderBytes: MaxHeaderBytes,
			DisableCompression:     true, // we ask for gzip and decode it ourselves
			ForceAttemptHTTP2:      cfg.EnableHTTP2,
			MaxIdleConns:           1024,
			MaxIdleConnsPerHost:    2,
			IdleConnTimeout:        90 * time.Second,
			ExpectContinueTimeout:  time.Second,
		}
		if a := cfg.Authorization; a != nil {
			rt = config.NewAuthorizationCredentialsRoundTripper(a.Type, secret(a.Credentials, a.CredentialsFile), rt)
		}
		if b := cfg.BasicAuth; b != nil {
			rt = config.NewBasicAuthRoundTripper(secret(config.Secret(b.Username), b.UsernameFile),
				secret(b.Password, b.PasswordFile), rt)
		}
		if o := cfg.OAuth2; o != nil {
			cred := secret(o.ClientSecret, o.ClientSecretFile)
			if o.GrantType == "urn:ietf:params:oauth:grant-type:jwt-bearer" {
				cred = secret(o.ClientCertificateKey, o.ClientCertificateKeyFile)
			}
			rt = config.NewOAuth2RoundTripper(cred, o, rt)
		}
		if cfg.HTTPHeaders != nil {
			rt = config.NewHeadersRoundTripper(cfg.HTTPHeaders, rt)
		}
		return rt, nil
	}

	tlsConfig, err := config.NewTLSConfigWithContext(ctx, &cfg.TLSConfig)
	if err != nil {
		return nil, err
	}
	t := cfg.TLSConfig
	if t.CAFile == "" && t.CertFile == "" && t.KeyFile == "" {
		return newRT(tlsConfig)
	}
	// Re-read CA, cert and key files when they change.
	settings := config.TLSRoundTripperSettings{
		CA:   secret(config.Secret(t.CA), t.CAFile),
		Cert: secret(config.Secret(t.Cert), t.CertFile),
		Key:  secret(t.Key, t.KeyFile),
	}
	return config.NewTLSRoundTripperWithContext(ctx, tlsConfig, settings, newRT)
}

// secret returns a reader for an inline secret or a file, or nil.
func secret(inline config.Secret, file string) config.SecretReader {
	switch {
	case inline != "":
		return config.NewInlineSecret(string(inline))
	case file != "":
		return config.NewFileSecret(file)
	}
	return nil
}

// hasCredentials reports whether requests will carry credentials.
func hasCredentials(cfg *config.HTTPClientConfig) bool {
	if cfg.Authorization != nil || cfg.BasicAuth != nil || cfg.OAuth2 != nil ||
		cfg.BearerToken != "" || cfg.BearerTokenFile != "" {
		return true
	}
	if cfg.HTTPHeaders != nil {
		for _, h := range cfg.HTTPHeaders.Headers {
			if len(h.Secrets) > 0 || len(h.Files) > 0 {
				return true
			}
		}
	}
	return false
}

// secretsOf lists the inline secret values of cfg worth scrubbing from
// messages, however they got there (at least 4 bytes: shorter ones would
// blank out ordinary words).
func secretsOf(cfg *config.HTTPClientConfig) []string {
	var out []string
	all := SecretsOf(cfg)
	if b := cfg.BasicAuth; b != nil && b.Password != "" {
		// The header value the password becomes.
		all = append(all, basicAuth(b.Username, string(b.Password)))
	}
	for _, s := range all {
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	return out
}

// SecretsOf lists every inline secret value of cfg: bearer token,
// authorization credentials, basic-auth password, OAuth2 client secret and key, TLS key, secret headers, proxy
// connect headers and a password in the proxy URL. File-backed secrets are
// not read. The one list of where an HTTPClientConfig keeps secrets.
func SecretsOf(cfg *config.HTTPClientConfig) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	add := func(s config.Secret) {
		if s != "" {
			out = append(out, string(s))
		}
	}
	add(cfg.BearerToken)
	if a := cfg.Authorization; a != nil {
		add(a.Credentials)
	}
	if b := cfg.BasicAuth; b != nil {
		add(b.Password)
	}
	if o := cfg.OAuth2; o != nil {
		add(o.ClientSecret)
		add(o.ClientCertificateKey)
	}
	add(cfg.TLSConfig.Key)
	if cfg.HTTPHeaders != nil {
		for _, h := range cfg.HTTPHeaders.Headers {
			for _, s := range h.Secrets {
				add(s)
			}
		}
	}
	for _, vs := range cfg.ProxyConnectHeader {
		for _, s := range vs {
			add(s)
		}
	}
	if u := cfg.ProxyURL.URL; u != nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(config.Secret(p))
		}
	}
	return out
}

// refFields names the first *_ref field set in cfg, or "".
func refFields(cfg *config.HTTPClientConfig) string {
	switch {
	case cfg.Authorization != nil && cfg.Authorization.CredentialsRef != "":
		return "authorization.credentials_ref"
	case cfg.BasicAuth != nil && (cfg.BasicAuth.UsernameRef != "" || cfg.BasicAuth.PasswordRef != ""):
		return "basic_auth.*_ref"
	case cfg.OAuth2 != nil && (cfg.OAuth2.ClientSecretRef != "" || cfg.OAuth2.ClientCertificateKeyRef != ""):
		return "oauth2.*_ref"
	case cfg.TLSConfig.CARef != "" || cfg.TLSConfig.CertRef != "" || cfg.TLSConfig.KeyRef != "":
		return "tls_config.*_ref"
	}
	return ""
}

// checkCredentials refuses a request that would carry credentials over
// plain http to a host that is not loopback.
func (c *Client) checkCredentials(u *url.URL) *sources.ScrapeError {
	if (!c.hasCreds && u.User == nil) || u.Scheme != "http" || c.allowInsecure || isLoopback(u.Hostname()) {
		return nil
	}
	return &sources.ScrapeError{
		Class: sources.ErrConfig,
		Message: "refusing to send credentials over plain http to " + sources.DisplayURL(u.String()) +
			"; use https or allow insecure credentials for this target",
	}
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errRedirectLimit stops a redirect chain that is too long.
var errRedirectLimit = errors.New("too many redirects")

// checkRedirect never follows a redirect unless the config asks for it,
// and even then never carries credentials to another host or onto plain
// http: it stops and lets Fetch report the 3xx.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if !c.follow {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errRedirectLimit
	}
	if c.hasCreds && !strings.EqualFold(req.URL.Hostname(), via[0].URL.Hostname()) {
		return http.ErrUseLastResponse
	}
	if c.checkCredentials(req.URL) != nil {
		return http.ErrUseLastResponse
	}
	return nil
}

// guardError is a connection refused by Options.DialGuard.
type guardError struct{ msg string }

func (e *guardError) Error() string { return e.msg }
