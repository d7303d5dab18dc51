package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// HostList is an operator allow-list of hosts: exact host names
// ("gw.example"), wildcard suffixes ("*.workers.svc" matches
// "a.workers.svc" and "a.b.workers.svc", not "workers.svc"), IP addresses
// and CIDR prefixes ("10.0.0.0/8", "fd00::/8"). The zero HostList matches
// nothing.
type HostList struct {
	names    []string // lower-case exact names
	suffixes []string // lower-case ".suffix"
	prefixes []netip.Prefix
}

// ParseHostList parses patterns; the error names the first bad one.
func ParseHostList(patterns []string) (HostList, error) {
	var h HostList
	for i, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "":
			return HostList{}, fmt.Errorf("entry %d is empty", i)
		case strings.Contains(p, "/"):
			pf, err := netip.ParsePrefix(p)
			if err != nil {
				return HostList{}, fmt.Errorf("entry %d %q is not a CIDR prefix", i, p)
			}
			h.prefixes = append(h.prefixes, pf.Masked())
		case strings.HasPrefix(p, "*."):
			if len(p) < 3 || strings.ContainsAny(p[2:], "*:/ ") {
				return HostList{}, fmt.Errorf("entry %d %q: a wildcard is \"*.\" followed by a domain", i, p)
			}
			h.suffixes = append(h.suffixes, p[1:])
		default:
			if a, err := netip.ParseAddr(strings.Trim(p, "[]")); err == nil {
				h.prefixes = append(h.prefixes, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			if strings.ContainsAny(p, "*:/ ") {
				return HostList{}, fmt.Errorf("entry %d %q is not a host, IP or CIDR", i, p)
			}
			h.names = append(h.names, strings.TrimSuffix(p, "."))
		}
	}
	return h, nil
}

// Empty reports whether the list matches nothing.
func (h HostList) Empty() bool {
	return len(h.names) == 0 && len(h.suffixes) == 0 && len(h.prefixes) == 0
}

// Match reports whether host (a name or an IP literal, without port) is on
// the list. A name matches only name patterns; an IP literal matches IP
// and CIDR patterns. Names are not resolved: a credential allow-list must
// not depend on what DNS answers.
func (h HostList) Match(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		for _, p := range h.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	for _, n := range h.names {
		if host == n {
			return true
		}
	}
	for _, s := range h.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// Contains reports whether ip falls in one of the list's IP or CIDR
// patterns.
func (h HostList) Contains(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range h.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
