package config

import (
	"fmt"
	"log/slog"
	"strings"

	pconfig "github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources/scrape"
)

// HTTP is one target's HTTP settings: prometheus/common's
// HTTPClientConfig (authorization, bearer_token(_file), basic_auth,
// oauth2, tls_config, proxy, http_headers, follow_redirects,
// enable_http2), as written in a Prometheus scrape config. The
// configuration sits behind a pointer and every printing path (String,
// GoString, fmt verbs, MarshalText, slog) shows only a summary without
// secret values; Config hands the real settings to the HTTP client.
type HTTP struct{ c *pconfig.HTTPClientConfig }

// NewHTTP wraps a copy of c.
func NewHTTP(c pconfig.HTTPClientConfig) HTTP { return HTTP{c: &c} }

// Config returns a copy of the settings, for scrape.NewClient only.
func (h HTTP) Config() pconfig.HTTPClientConfig {
	if h.c == nil {
		return pconfig.HTTPClientConfig{}
	}
	return *h.c
}

// HasCredentials reports whether requests will carry credentials
// (authorization, basic auth, OAuth2, secret or file-backed headers, or a
// TLS client certificate).
func (h HTTP) HasCredentials() bool {
	c := h.c
	if c == nil {
		return false
	}
	if c.Authorization != nil || c.BasicAuth != nil || c.OAuth2 != nil || c.BearerToken != "" || c.BearerTokenFile != "" {
		return true
	}
	if t := c.TLSConfig; t.CertFile != "" || t.Cert != "" || t.KeyFile != "" || t.Key != "" {
		return true
	}
	if c.HTTPHeaders != nil {
		for _, hd := range c.HTTPHeaders.Headers {
			if len(hd.Secrets) > 0 || len(hd.Files) > 0 {
				return true
			}
		}
	}
	return false
}

// Auth summarises how requests authenticate, for the targets view:
// "bearer", "basic", "oauth2", "mTLS", "headers" (comma-separated), plus
// "no-verify" when TLS certificate checks are off; "" for none. It never
// contains a secret.
func (h HTTP) Auth() string {
	c := h.c
	if c == nil {
		return ""
	}
	var out []string
	switch {
	case c.Authorization != nil:
		t := strings.ToLower(strings.TrimSpace(c.Authorization.Type))
		if t == "" {
			t = "bearer"
		}
		out = append(out, sanitizeWord(t))
	case c.BearerToken != "" || c.BearerTokenFile != "":
		out = append(out, "bearer")
	case c.BasicAuth != nil:
		out = append(out, "basic")
	case c.OAuth2 != nil:
		out = append(out, "oauth2")
	}
	if t := c.TLSConfig; t.CertFile != "" || t.Cert != "" {
		out = append(out, "mTLS")
	}
	if c.HTTPHeaders != nil && len(c.HTTPHeaders.Headers) > 0 {
		out = append(out, "headers")
	}
	if c.TLSConfig.InsecureSkipVerify {
		out = append(out, "no-verify")
	}
	return strings.Join(out, ",")
}

// sanitizeWord keeps an authorization scheme name printable and short.
func sanitizeWord(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 16 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "auth"
	}
	return b.String()
}

// WithoutCredentials returns the settings minus everything that
// authenticates (authorization, bearer token, basic auth, OAuth2, custom
// headers, TLS client certificate and key) and minus server_name, which
// names the gateway's host: what a discovered worker that is not on the
// credential allow-list gets. The CA, certificate verification, TLS
// versions and proxy settings are kept.
func (h HTTP) WithoutCredentials() HTTP {
	c := h.Config()
	c.Authorization, c.BasicAuth, c.OAuth2, c.HTTPHeaders = nil, nil, nil, nil
	c.BearerToken, c.BearerTokenFile = "", ""
	c.TLSConfig.Cert, c.TLSConfig.CertFile, c.TLSConfig.CertRef = "", "", ""
	c.TLSConfig.Key, c.TLSConfig.KeyFile, c.TLSConfig.KeyRef = "", "", ""
	c.TLSConfig.ServerName = ""
	return NewHTTP(c)
}

// Secrets returns the inline secret values (tokens, passwords, keys,
// secret headers, proxy connect headers), for scrubbing them from
// anything printed (scrape.SecretsOf: the one list of where they are).
// File-backed secrets are not read.
func (h HTTP) Secrets() []Secret {
	c := h.c
	if c == nil {
		return nil
	}
	var out []Secret
	for _, s := range scrape.SecretsOf(c) {
		out = append(out, NewSecret(s))
	}
	return out
}

// Files lists the files the settings read, as "field: path" pairs, so the
// command can check they exist before the dashboard starts.
func (h HTTP) Files() map[string]string {
	c := h.c
	out := map[string]string{}
	if c == nil {
		return out
	}
	set := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	set("bearer_token_file", c.BearerTokenFile)
	if a := c.Authorization; a != nil {
		set("authorization.credentials_file", a.CredentialsFile)
	}
	if b := c.BasicAuth; b != nil {
		set("basic_auth.username_file", b.UsernameFile)
		set("basic_auth.password_file", b.PasswordFile)
	}
	if o := c.OAuth2; o != nil {
		set("oauth2.client_secret_file", o.ClientSecretFile)
	}
	set("tls_config.ca_file", c.TLSConfig.CAFile)
	set("tls_config.cert_file", c.TLSConfig.CertFile)
	set("tls_config.key_file", c.TLSConfig.KeyFile)
	return out
}

// summary is the printable form: "http{auth=bearer, tls=ca}".
func (h HTTP) summary() string {
	var parts []string
	if a := h.Auth(); a != "" {
		parts = append(parts, "auth="+a)
	}
	if c := h.c; c != nil {
		if c.TLSConfig.CAFile != "" || c.TLSConfig.CA != "" {
			parts = append(parts, "tls=ca")
		}
		if c.ProxyURL.URL != nil || c.ProxyFromEnvironment {
			parts = append(parts, "proxy")
		}
		if c.FollowRedirects {
			parts = append(parts, "follow_redirects")
		}
	}
	return "http{" + strings.Join(parts, ", ") + "}"
}

// String implements fmt.Stringer without secret values.
func (h HTTP) String() string { return h.summary() }

// GoString implements fmt.GoStringer without secret values.
func (h HTTP) GoString() string { return "config.HTTP" + strings.TrimPrefix(h.summary(), "http") }

// Format implements fmt.Formatter: every verb prints the summary.
func (h HTTP) Format(f fmt.State, verb rune) {
	s := h.summary()
	if verb == 'v' && f.Flag('#') {
		s = h.GoString()
	}
	_, _ = f.Write([]byte(s))
}

// MarshalText implements encoding.TextMarshaler with the summary.
func (h HTTP) MarshalText() ([]byte, error) { return []byte(h.summary()), nil }

// LogValue implements slog.LogValuer with the summary.
func (h HTTP) LogValue() slog.Value { return slog.StringValue(h.summary()) }
