package discovery

import (
	"errors"
	"net/netip"

	"github.com/pdtop/pdtop/sources/config"
)

// metadata lists cloud metadata addresses outside the link-local range
// (169.254.169.254 and fd00:ec2::254's IPv4 twin are link-local already).
var metadata = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
}

// guard returns the DialGuard for workers discovered from a gateway:
// link-local, metadata, unspecified, multicast and broadcast addresses are
// refused, and loopback too unless the gateway itself is on loopback (a
// remote gateway has no business pointing pdtop at this machine's own
// ports); allow exempts addresses the operator listed.
func guard(allow config.HostList, loopbackOK bool) func(netip.Addr) error {
	return func(ip netip.Addr) error {
		if allow.Contains(ip) {
			return nil
		}
		if why := blocked(ip, loopbackOK); why != "" {
			return errors.New("blocked: discovered worker at " + ip.String() + " is " + why +
				" (allow it with discovery.allow_networks)")
		}
		return nil
	}
}

// blocked says why ip is refused for a discovered worker, or "".
func blocked(ip netip.Addr, loopbackOK bool) string {
	ip = ip.Unmap()
	for _, m := range metadata {
		if ip == m {
			return "a cloud metadata address"
		}
	}
	switch {
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "link-local (cloud metadata lives there)"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "multicast/broadcast"
	case ip.IsLoopback() && !loopbackOK:
		return "loopback but the gateway is not"
	}
	return ""
}
