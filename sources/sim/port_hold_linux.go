//go:build linux && !(mips || mipsle || mips64 || mips64le)

package sim

// soReusePort is SO_REUSEPORT (the syscall package does not name it on
// Linux).
const soReusePort = 0xf
