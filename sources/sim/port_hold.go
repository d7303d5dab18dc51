//go:build (linux && !(mips || mipsle || mips64 || mips64le)) || darwin || freebsd

package sim

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// A served endpoint that goes down (Kill, restart warm-up) must refuse
// connections yet keep its port, or a client's outgoing connection may
// take the port and the endpoint would come back elsewhere. So listeners
// set SO_REUSEPORT, and a down endpoint's port is held by a socket that is
// bound but never listens: connections to it are refused, nobody else can
// bind it, and the next listener binds next to the holder before it goes.

func listenTCP(addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, soReusePort, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(context.Background(), "tcp", addr)
}

// holdPort binds a non-listening socket to addr and returns its release.
func holdPort(addr string) (func(), error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, err
	}
	ip := ap.Addr().Unmap()
	family := syscall.AF_INET6
	var sa syscall.Sockaddr = &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}
	if ip.Is4() {
		family = syscall.AF_INET
		sa = &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, fmt.Errorf("hold %s: %w", addr, err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, soReusePort, 1); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("hold %s: %w", addr, err)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("hold %s: %w", addr, err)
	}
	return func() { _ = syscall.Close(fd) }, nil
}
