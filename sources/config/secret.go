package config

import (
	"fmt"
	"log/slog"
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
