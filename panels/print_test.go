package panels

import (
	"strings"
	"testing"

	"github.com/pdtop/pdtop/themes"
)

// TestPrintGolden prints every panel as pdtop snapshot does (plain text,
// natural height, no charts) at 100 columns.
func TestPrintGolden(t *testing.T) {
	st := themes.NewStyles(themes.Mono())
	var b strings.Builder
	for id := ID(0); id < NumPanels; id++ {
		v := Print(id, sampleSnapshot(), st, 100)
		lines := strings.Split(v, "\n")
		checkBlock(t, id.String(), v, 100, len(lines))
		if strings.ContainsAny(v, "⠁⠂⠄⡀▁▂▃▄▅▆▇") {
			t.Errorf("%s: printed panel has a chart or sparkline:\n%s", id, v)
		}
		b.WriteString(v + "\n")
	}
	golden(t, "print_100", strings.TrimSuffix(b.String(), "\n"))
}
