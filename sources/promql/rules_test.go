package promql

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"
)

// The rule file is valid YAML with one recorded series per pool figure the
// backend reads, each labelled with its window; the selector's labels are
// kept and its matchers applied.
func TestRulesCoverEveryPoolQuery(t *testing.T) {
	sel, err := ParseSelector(`{namespace="serving", cluster=~"eu-.*"}`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Rules(RulesOptions{Selector: sel, Window: 30 * time.Second, Interval: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(out, &f); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	if len(f.Groups) != 1 || f.Groups[0].Interval != "15s" {
		t.Fatalf("groups %+v", f.Groups)
	}
	recorded := map[string]bool{}
	for _, r := range f.Groups[0].Rules {
		recorded[r.Record] = true
		if r.Labels[windowLabel] != "30s" {
			t.Errorf("%s: labels %v", r.Record, r.Labels)
		}
		if !strings.Contains(r.Expr, `namespace="serving"`) || !strings.Contains(r.Expr, "cluster, namespace") {
			t.Errorf("%s does not apply and keep the selector: %s", r.Record, r.Expr)
		}
	}
	// Every recorded series the backend queries exists.
	b := &Backend{plan: newPlan(sel, "instance", "engine_type")}
	var wanted []string
	qs := append(b.recordedPoolQueries(30*time.Second), query{"workers", b.recordedWorkers(30 * time.Second)},
		query{"rows", b.recordedRows(30*time.Second, nil, 10)}, query{"restarts", b.recordedRestarts(30 * time.Second)})
	for _, q := range qs {
		for _, part := range strings.Split(q.q, "pdtop:")[1:] {
			name := "pdtop:" + part[:strings.IndexAny(part, "{ )")]
			wanted = append(wanted, name)
			if !recorded[name] {
				t.Errorf("%s queries %s, which no rule records", q.name, name)
			}
		}
	}
	if len(wanted) < len(gaugeSignals)+len(counterSignals)+3*len(histSignals) {
		t.Errorf("only %d recorded series queried", len(wanted))
	}
}

// promtool, when installed (Debian's prometheus package), accepts them.
func TestRulesPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install -y prometheus)")
	}
	out, err := Rules(RulesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(promtool, "check", "rules", p).CombinedOutput(); err != nil {
		t.Fatalf("promtool: %v\n%s", err, msg)
	}
}
