package scrape

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
)

// A DialGuard sees the resolved address of every dial and can refuse it;
// the scrape then fails as a configuration error with the guard's reason.
func TestDialGuardRefusesAddresses(t *testing.T) {
	srv := serve(t, okHandler)
	var seen []netip.Addr
	c := newClient(t, config.HTTPClientConfig{}, Options{DialGuard: func(ip netip.Addr) error {
		seen = append(seen, ip)
		return errors.New("blocked: " + ip.String() + " is not allowed for discovered targets")
	}})
	r := c.Fetch(context.Background(), srv.URL+"/metrics")
	wantErr(t, r, sources.ErrConfig, "blocked: 127.0.0.1 is not allowed")
	if len(seen) != 1 || seen[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("guard saw %v", seen)
	}

	ok := newClient(t, config.HTTPClientConfig{}, Options{DialGuard: func(netip.Addr) error { return nil }})
	if r := ok.Fetch(context.Background(), srv.URL+"/metrics"); r.Err != nil {
		t.Fatalf("allowed dial failed: %v", r.Err)
	}
}
