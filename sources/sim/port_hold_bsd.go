//go:build darwin || freebsd

package sim

import "syscall"

const soReusePort = syscall.SO_REUSEPORT
