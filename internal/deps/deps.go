// Package deps pins the module's dependencies while the packages that use
// them are being written. It is removed once every dependency is imported
// by real code.
package deps

import (
	_ "github.com/NimbleMarkets/ntcharts/sparkline"
	_ "github.com/charmbracelet/bubbles/help"
	_ "github.com/charmbracelet/bubbles/key"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/api/prometheus/v1"
	_ "github.com/prometheus/client_model/go"
	_ "github.com/prometheus/common/config"
	_ "github.com/prometheus/common/expfmt"
	_ "go.yaml.in/yaml/v2"
)
