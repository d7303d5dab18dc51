package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/pdtop/pdtop/sources"
)

// insecure refuses credentials over plain http to a non-loopback host
// unless allowed (robustness.md §6.5).
func insecure(field, raw string, h HTTP, allowed bool) error {
	if raw == "" || allowed || !h.HasCredentials() {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || IsLoopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%s: credentials would go over plain http to %s; use https, or set allow_insecure_credentials: true",
		field, sources.DisplayURL(raw))
}

// IsLoopback reports whether host is localhost or a loopback address.
func IsLoopback(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// MetricsURL completes a user-given address to a metrics URL: a missing
// scheme becomes http, an empty path /metrics. It rejects other schemes,
// a missing host and credentials in the URL (use basic_auth instead, so
// they are never shown).
func MetricsURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("missing")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q not supported (use http or https)", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", errors.New("no host")
	}
	if u.User != nil {
		return "", errors.New("credentials in the URL are not allowed (use basic_auth or authorization, so they are never displayed)")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}

// baseURL validates scheme://host[:port] (a path is dropped).
func baseURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return "", errors.New("not a URL with a host")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q not supported (use http or https)", u.Scheme)
	}
	if u.User != nil {
		return "", errors.New("credentials in the URL are not allowed")
	}
	return u.Scheme + "://" + u.Host, nil
}
