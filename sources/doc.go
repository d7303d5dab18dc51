// Package sources holds the value types that flow one way through pdtop:
// targets are scraped (sources/scrape), parsed (sources/expo), mapped from
// engine-specific metric names to canonical signals (sources/schema), kept
// in a bounded history (sources/store) and derived into an immutable
// Snapshot that panels draw.
//
// This package itself does no I/O. It knows nothing of bubbletea, lipgloss
// or ntcharts, and nothing of concrete metric names: those live only in
// sources/schema.
package sources
