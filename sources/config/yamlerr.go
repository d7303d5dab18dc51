package config

import (
	"errors"
	"regexp"
	"strings"

	"github.com/prometheus/common/model"
	yaml "go.yaml.in/yaml/v2"
)

// yamlTypeNames maps decoder type names to the section they describe.
var yamlTypeNames = strings.NewReplacer(
	"in type config.rawFile", "at the top level",
	"in type config.rawDiscovery", "in discovery",
	"in type sources.Thresholds", "in thresholds",
	"in type config.plain", "in this block",
	"in type config.", "in ",
)

// yamlError rewrites a YAML decoding error into one readable line per
// problem, naming the line; it quotes nothing from the document beyond
// field names and types, so no secret value can leak through it.
func yamlError(err error, _ []byte) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, m := range te.Errors {
			msgs = append(msgs, redactValue(yamlTypeNames.Replace(m)))
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	msg := redactValue(strings.TrimPrefix(err.Error(), "yaml: "))
	if strings.Contains(msg, "found character that cannot start any token") {
		// Almost always a tab: YAML indents with spaces only.
		msg += " (a tab? YAML indents with spaces only)"
	}
	return errors.New(msg)
}

// cannotUnmarshal matches yaml v2's "cannot unmarshal !!str `value` into"
// messages, which quote the value (possibly a secret).
var cannotUnmarshal = regexp.MustCompile("`[^`]*`")

func redactValue(s string) string { return cannotUnmarshal.ReplaceAllString(s, "(value)") }

// duration is a model.Duration ("500ms", "1s", "2m", "1h30m") whose
// decoding error names its line. yaml v2 tells a custom unmarshaler
// nothing of where it is, so on a bad value the node is decoded once more
// into a type no scalar fits: the decoder's own type error names the line,
// and the line is all that is kept of it (the value is not quoted: a
// field next to a secret should not echo it).
type duration model.Duration

// UnmarshalYAML parses a Prometheus duration string.
func (d *duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	v, err := model.ParseDuration(s)
	if err == nil {
		*d = duration(v)
		return nil
	}
	msg := "not a duration: want a number and a unit, e.g. 500ms, 1s, 2m"
	if strings.HasPrefix(strings.TrimSpace(s), "-") {
		msg = "a negative duration: want a positive one, e.g. 500ms, 1s, 2m"
	}
	var probe struct{}
	var te *yaml.TypeError
	if perr := unmarshal(&probe); errors.As(perr, &te) && len(te.Errors) > 0 {
		if line, _, ok := strings.Cut(te.Errors[0], ":"); ok && strings.HasPrefix(line, "line ") {
			msg = line + ": " + msg
		}
	}
	return &yaml.TypeError{Errors: []string{msg}}
}
