package expo

import "strings"

// famType is a family's declared type, normalised.
type famType uint8

const (
	tNone famType = iota // no # TYPE line: expfmt makes it untyped
	tCounter
	tGauge
	tHistogram
	tGaugeHistogram
	tSummary
	tUntyped
	tInfo     // OpenMetrics only; parsed as a gauge
	tStateset // OpenMetrics only; parsed as a gauge
)

// expfmtName is the TYPE token handed to expfmt ("" = no TYPE line).
func (t famType) expfmtName() string {
	switch t {
	case tCounter:
		return "counter"
	case tGauge, tInfo, tStateset:
		return "gauge"
	case tHistogram:
		return "histogram"
	case tGaugeHistogram:
		return "gaugehistogram"
	case tSummary:
		return "summary"
	case tUntyped:
		return "untyped"
	}
	return ""
}

// simple reports whether every sample line of the type is its own series.
func (t famType) simple() bool {
	return t != tHistogram && t != tGaugeHistogram && t != tSummary
}

// parseType maps a TYPE token (any case) to a famType; om is true for
// tokens only OpenMetrics uses.
func parseType(tok []byte) (t famType, om, ok bool) {
	switch strings.ToLower(string(tok)) {
	case "counter":
		return tCounter, false, true
	case "gauge":
		return tGauge, false, true
	case "histogram":
		return tHistogram, false, true
	case "summary":
		return tSummary, false, true
	case "untyped":
		return tUntyped, false, true
	case "gauge_histogram":
		return tGaugeHistogram, false, true
	case "gaugehistogram":
		return tGaugeHistogram, true, true
	case "unknown":
		return tUntyped, true, true
	case "info":
		return tInfo, true, true
	case "stateset":
		return tStateset, true, true
	}
	return tNone, false, false
}

// family is one metric family as the pre-pass sees it.
type family struct {
	name      string
	typ       famType
	help      []byte // raw HELP text (escapes as exposed), valid UTF-8
	hasHelp   bool
	helpLine  int32
	typeLine  int32
	firstLine int32
	idx       int32
	keep      bool
	declared  bool    // seen in a # TYPE line
	parent    *family // set for families split off an OpenMetrics family (foo → foo_total, foo_created)
	left      bool    // another family's line came after this family's lines
	samples   int32   // sample lines seen (kept or not)
	kept      int32   // sample lines recorded for parsing
}

// lineRec is one kept sample line: its bytes in the body (or in the alt
// buffer when it had to be rewritten), its family and original line.
type lineRec struct {
	start, end int
	fam        int32
	line       int32
	alt        bool
}

// suffix routing: which sample-name suffixes belong to which family type.
type sfxRule struct {
	sfx     string
	same    bool    // the sample belongs to the family itself (expfmt knows the suffix)
	derived famType // otherwise it becomes a family of its own, with this type
}

var suffixes = []string{"_bucket", "_count", "_sum", "_total", "_created", "_gsum", "_gcount", "_info"}

// rule returns how a sample named base+sfx relates to a family of type t.
func rule(t famType, sfx string) (sfxRule, bool) {
	switch t {
	case tHistogram, tGaugeHistogram:
		switch sfx {
		case "_bucket", "_sum", "_count":
			return sfxRule{sfx: sfx, same: true}, true
		case "_created", "_gsum", "_gcount":
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	case tSummary:
		switch sfx {
		case "_sum", "_count":
			return sfxRule{sfx: sfx, same: true}, true
		case "_created":
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	case tCounter:
		switch sfx {
		case "_total":
			return sfxRule{sfx: sfx, derived: tCounter}, true
		case "_created":
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	case tInfo:
		if sfx == "_info" {
			return sfxRule{sfx: sfx, derived: tGauge}, true
		}
	}
	return sfxRule{}, false
}
