package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v2"
)

// Sentinel values that must never be printed.
const (
	sentBearer = "SENTINEL-bearer-7f3a"
	sentPass   = "SENTINEL-pass-91cc"
	sentHeader = "SENTINEL-header-0b2e"
	sentProxy  = "SENTINEL-proxy-44d1"
	sentOAuth  = "SENTINEL-oauth-5e6f"
	sentQuery  = "SENTINEL-query-2a7b"
)

var sentinels = []string{sentBearer, sentPass, sentHeader, sentProxy, sentOAuth, sentQuery}

const secretDoc = `
gateways:
  - url: https://gw:29000
    bearer_token: ` + sentBearer + `
    http_headers:
      X-Api-Key:
        secrets: [` + sentHeader + `]
    proxy_url: http://proxy:3128
    proxy_connect_header:
      Proxy-Authorization: [` + sentProxy + `]
targets:
  - url: https://w:30001
    basic_auth:
      username: pdtop
      password: ` + sentPass + `
  - url: https://w:30002
    oauth2:
      client_id: pdtop
      client_secret: ` + sentOAuth + `
      token_url: https://auth/token
  - url: https://w:30003/metrics?token=` + sentQuery + `
`

func noSentinel(t *testing.T, what, s string) {
	t.Helper()
	for _, v := range sentinels {
		if strings.Contains(s, v) {
			t.Errorf("%s shows secret %s:\n%s", what, v, s)
		}
	}
}

// Every way Go prints the parsed file hides the secrets (robustness.md
// §6.2): fmt verbs, JSON, YAML, slog text and JSON handlers.
func TestParsedFilePrintsNoSecret(t *testing.T) {
	f := mustParse(t, secretDoc)
	if got := len(f.Secrets()); got != 5 {
		t.Fatalf("Secrets() found %d values, want 5", got)
	}
	for _, s := range f.Secrets() {
		if !strings.HasPrefix(s.Reveal(), "SENTINEL-") {
			t.Fatalf("Reveal() = %q", s.Reveal())
		}
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10.3v", "%T %v"} {
		noSentinel(t, verb, fmt.Sprintf(verb, f))
		noSentinel(t, verb+" (value)", fmt.Sprintf(verb, *f))
		noSentinel(t, verb+" (gateway)", fmt.Sprintf(verb, f.Gateways[0]))
		noSentinel(t, verb+" (secrets)", fmt.Sprintf(verb, f.Secrets()))
	}
	// Structs that keep the settings in unexported fields.
	type holder struct {
		h HTTP
		s Secret
	}
	noSentinel(t, "unexported fields", fmt.Sprintf("%+v %#v", holder{f.Gateways[0].HTTP, f.Secrets()[0]}, holder{f.Targets[0].HTTP, f.Secrets()[1]}))

	j, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	noSentinel(t, "JSON", string(j))
	y, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	noSentinel(t, "YAML", string(y))

	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		l := slog.New(h)
		l.Info("config", "file", f, "gateway", f.Gateways[0], "http", f.Targets[0].HTTP, "secret", f.Secrets()[0])
		l.Info("config", slog.Any("secrets", f.Secrets()), slog.Any("gw", f.Gateways))
	}
	noSentinel(t, "slog", buf.String())
	if u := f.Targets[2].URL; !strings.Contains(u.Full(), sentQuery) || u.String() != "https://w:30003/metrics" {
		t.Errorf("URL: full %q, shown %q", u.Full(), u)
	}
	if !strings.Contains(buf.String(), Redacted) {
		t.Errorf("slog output does not show the redaction mark:\n%s", buf.String())
	}
	if s := fmt.Sprint(f.Gateways[0].HTTP); !strings.Contains(s, "auth=bearer,headers") || !strings.Contains(s, "proxy") {
		t.Errorf("summary %q does not say how the target authenticates", s)
	}
}

// Errors about a secret-bearing block name the field, never the value.
func TestErrorsCarryNoSecret(t *testing.T) {
	for _, doc := range []string{
		"targets:\n  - url: http://w.example:1\n    bearer_token: " + sentBearer + "\n",
		"targets:\n  - url: https://w:1\n    bearer_token: " + sentBearer + "\n    bearer_token_file: x\n",
		"targets:\n  - url: https://w:1\n    basic_auth:\n      password: " + sentPass + "\n      password_file: x\n",
		"targets:\n  - url: https://w:1\n    bearer_token: [" + sentBearer + "]\n",
		"targets:\n  - url: https://w:1\n    bearer_token: {x: " + sentBearer + "}\n",
		"targets:\n  - url: https://w:1\n    bearer_tokn: " + sentBearer + "\n",
		"targets:\n  - url: https://w:1\n    oauth2:\n      client_secret: " + sentOAuth + "\n",
		"targets:\n  - url: https://w:1\n    basic_auth: " + sentPass + "\n",
		"targets:\n  - url: https://w:1\n    follow_redirects: " + sentPass + "\n",
	} {
		_, err := Parse([]byte(doc), "")
		if err == nil {
			t.Errorf("no error for\n%s", doc)
			continue
		}
		noSentinel(t, "error", err.Error())
	}
}
