package scrape

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/config"

	"github.com/pdtop/pdtop/sources"
)

// Tests in this package do not run in parallel: the gzip-bomb test reads
// the process's allocation counter.

const metricsBody = "# HELP sglang:num_running_reqs The number of running requests.\n" +
	"# TYPE sglang:num_running_reqs gauge\n" +
	"sglang:num_running_reqs{model_name=\"m\"} 3.0\n"

func newClient(t *testing.T, cfg config.HTTPClientConfig, opt Options) *Client {
	t.Helper()
	c, err := NewClient(cfg, opt)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// wantErr fails unless r failed with class and a message containing sub.
func wantErr(t *testing.T, r Response, class sources.ErrorClass, sub string) {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("fetch succeeded (status %d), want %s error", r.Status, class)
	}
	if r.Err.Class != class || !strings.Contains(r.Err.Message, sub) {
		t.Fatalf("got %s: %q, want %s containing %q", r.Err.Class, r.Err.Message, class, sub)
	}
	if strings.ContainsAny(r.Err.Message, "\n\r\x1b") {
		t.Fatalf("message is not one safe line: %q", r.Err.Message)
	}
	if r.Body != nil {
		t.Fatalf("failed fetch returned a body of %d bytes", len(r.Body))
	}
}

// refusedAddr returns a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// nxdomainResolver returns a resolver that asks a DNS server on loopback
// which answers NXDOMAIN to everything, so DNS tests are hermetic.
func nxdomainResolver(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			// Header + the question only: QR, RD copied, RA, RCODE=3.
			end := 12
			for end < n && buf[end] != 0 {
				end += int(buf[end]) + 1
			}
			end += 5 // root label + QTYPE + QCLASS
			if end > n {
				continue
			}
			resp := append([]byte(nil), buf[:end]...)
			resp[2] = 0x80 | 0x04 | (buf[2] & 0x01)
			resp[3] = 0x80 | 3
			resp[4], resp[5] = 0, 1 // one question
			clear(resp[6:12])       // no answer, authority or additional records
			pc.WriteTo(resp, addr)
		}
	}()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", pc.LocalAddr().String())
		},
	}
}

// expiredTLSServer serves h with a certificate that expired yesterday,
// issued by a CA it returns as PEM.
func expiredTLSServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, string) {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pdtop test CA"},
		NotBefore:             now.Add(-72 * time.Hour),
		NotAfter:              now.Add(72 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-48 * time.Hour),
		NotAfter:     now.Add(-24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = quietLog
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
}

// httptestTLS serves okHandler over TLS with httptest's own certificate
// (valid for 127.0.0.1 and example.com, from a CA clients don't trust).
func httptestTLS(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(okHandler))
	srv.Config.ErrorLog = quietLog // clients that reject the certificate are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// certPEM returns a TLS test server's certificate as PEM (to trust it).
func certPEM(srv *httptest.Server) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}

// quietLog discards the test servers' TLS handshake complaints.
var quietLog = log.New(io.Discard, "", 0)

// okHandler serves metricsBody as text 0.0.4.
func okHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write([]byte(metricsBody))
}

// TestSecretsOfListsEveryPlace: the one list of inline secrets covers the
// proxy URL's password too (the config's scrubber and the client's used to
// keep two lists that differed there).
func TestSecretsOfListsEveryPlace(t *testing.T) {
	u, _ := url.Parse("http://user:proxy-pass-1@proxy:3128")
	cfg := config.HTTPClientConfig{BearerToken: "token-123", BasicAuth: &config.BasicAuth{Username: "u", Password: "basic-pass"},
		ProxyConfig: config.ProxyConfig{ProxyURL: config.URL{URL: u}}}
	got := strings.Join(SecretsOf(&cfg), " ")
	for _, want := range []string{"token-123", "basic-pass", "proxy-pass-1"} {
		if !strings.Contains(got, want) {
			t.Errorf("SecretsOf lacks %q: %q", want, got)
		}
	}
	if inner := strings.Join(secretsOf(&cfg), " "); !strings.Contains(inner, basicAuth("u", "basic-pass")) || !strings.Contains(inner, "proxy-pass-1") {
		t.Errorf("the client's scrub list: %q", inner)
	}
}
