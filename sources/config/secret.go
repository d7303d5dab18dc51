package config

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/pdtop/pdtop/sources"
)

// Redacted is what every printing path of a Secret or HTTP shows in place
// of a secret value.
const Redacted = "<secret>"

// Secret holds a credential (token, password, key) read from the
// configuration. Every way Go prints a value — String, GoString, every fmt
// verb, encoding.TextMarshaler (so JSON and YAML), slog — yields
// "<secret>"; only Reveal returns the value. The value sits behind a
// pointer, so even a Secret inside an unexported struct field that fmt
// walks by reflection prints as an address, never as the text
// (prometheus/common's config.Secret is a plain string that redacts only
// when marshalled to YAML or JSON; robustness.md §6.2).
type Secret struct{ v *string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{v: &s} }

// Reveal returns the secret value. Call it only to hand the value to the
// code that sends it (or scrubs it from a message).
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.Reveal() == "" }

// String implements fmt.Stringer.
func (s Secret) String() string { return Redacted }

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return Redacted }

// Format implements fmt.Formatter: every verb prints "<secret>".
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Redacted)) }

// MarshalText implements encoding.TextMarshaler (JSON, YAML, slog JSON).
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

// URL is a target's full metrics URL. It may carry a token in its query
// string, so every printing path shows only scheme://host:port/path
// (sources.DisplayURL); Full returns the whole URL for the request.
type URL struct{ v *string }

// NewURL wraps u.
func NewURL(u string) URL { return URL{v: &u} }

// Full returns the whole URL, query included.
func (u URL) Full() string {
	if u.v == nil {
		return ""
	}
	return *u.v
}

func (u URL) shown() string {
	if u.v == nil {
		return ""
	}
	return sources.DisplayURL(*u.v)
}

// String implements fmt.Stringer with the display form.
func (u URL) String() string { return u.shown() }

// GoString implements fmt.GoStringer with the display form.
func (u URL) GoString() string { return strconv.Quote(u.shown()) }

// Format implements fmt.Formatter: every verb prints the display form.
func (u URL) Format(f fmt.State, verb rune) {
	s := u.shown()
	if verb == 'q' || verb == 'v' && f.Flag('#') {
		s = strconv.Quote(s)
	}
	_, _ = f.Write([]byte(s))
}

// MarshalText implements encoding.TextMarshaler with the display form.
func (u URL) MarshalText() ([]byte, error) { return []byte(u.shown()), nil }

// LogValue implements slog.LogValuer with the display form.
func (u URL) LogValue() slog.Value { return slog.StringValue(u.shown()) }
