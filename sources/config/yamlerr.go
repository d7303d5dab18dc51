package config

import (
	"errors"
	"regexp"
	"strings"

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
	return errors.New(redactValue(strings.TrimPrefix(err.Error(), "yaml: ")))
}

// cannotUnmarshal matches yaml v2's "cannot unmarshal !!str `value` into"
// messages, which quote the value (possibly a secret).
var cannotUnmarshal = regexp.MustCompile("`[^`]*`")

func redactValue(s string) string { return cannotUnmarshal.ReplaceAllString(s, "(value)") }
