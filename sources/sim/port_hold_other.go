//go:build !((linux && !(mips || mipsle || mips64 || mips64le)) || darwin || freebsd)

package sim

import (
	"errors"
	"net"
)

// Without SO_REUSEPORT a down endpoint closes its listener and re-binds
// the same port when it comes back (or a new port, if it was taken).

func listenTCP(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func holdPort(string) (func(), error) { return nil, errors.New("sim: port holding unsupported") }
