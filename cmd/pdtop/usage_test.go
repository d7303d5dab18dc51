package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdtop/pdtop/sources/sim"
)

// TestHelpListsCommands: 'pdtop -h' shows the subcommands as 'pdtop help'
// does, then the dashboard's flags.
func TestHelpListsCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"-h"}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d", rc)
	}
	h := errOut.String()
	for _, want := range []string{"pdtop demo [flags]", "pdtop record -o FILE", "pdtop replay FILE", "pdtop snapshot",
		"pdtop sim", "-gateway URL"} {
		if !strings.Contains(h, want) {
			t.Errorf("pdtop -h lacks %q:\n%s", want, h)
		}
	}
}

// TestDemoHelpDescribesScenarios: 'demo -h' and 'sim -h' give every
// scenario its one-line description.
func TestDemoHelpDescribesScenarios(t *testing.T) {
	for _, cmd := range []string{"demo", "sim"} {
		var out, errOut bytes.Buffer
		run([]string{cmd, "-h"}, &out, &errOut)
		for _, sc := range sim.Scenarios() {
			if !strings.Contains(errOut.String(), sc.Name) || !strings.Contains(errOut.String(), sc.Description) {
				t.Errorf("%s -h lacks %s — %s:\n%s", cmd, sc.Name, sc.Description, errOut.String())
			}
		}
	}
}

// TestRecordHelpHasNoViewFlags: record draws nothing, so it offers no
// --theme or --mouse.
func TestRecordHelpHasNoViewFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	run([]string{"record", "-h"}, &out, &errOut)
	h := errOut.String()
	if strings.Contains(h, "-theme") || strings.Contains(h, "-mouse") || !strings.Contains(h, "-interval") {
		t.Errorf("record -h:\n%s", h)
	}
}

// TestErrorsSayWhatToDo: an unknown scenario lists the valid ones; a
// demo without a terminal points to 'pdtop snapshot demo'; a bad
// duration in the config file names its line.
func TestErrorsSayWhatToDo(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"demo", "--scenario", "nope"}, &out, &errOut); rc != 1 {
		t.Fatalf("exit %d", rc)
	}
	if e := errOut.String(); !strings.Contains(e, "prefill-restart") || !strings.Contains(e, "cycle") ||
		strings.Contains(e, "sim.Scenarios") {
		t.Errorf("unknown scenario: %q", e)
	}
	errOut.Reset()
	if rc := run([]string{"demo"}, &out, &errOut); rc != 1 || !strings.Contains(errOut.String(), "'pdtop snapshot demo'") {
		t.Errorf("demo without a terminal: exit %d, %q", rc, errOut.String())
	}
	errOut.Reset()
	if rc := run([]string{"--worker", "x:1"}, &out, &errOut); rc != 1 || !strings.Contains(errOut.String(), "'pdtop snapshot' (same target flags)") {
		t.Errorf("live without a terminal: exit %d, %q", rc, errOut.String())
	}
	cfg := filepath.Join(t.TempDir(), "pdtop.yaml")
	if err := os.WriteFile(cfg, []byte("gateways:\n  - url: http://gw:29000\ninterval: fast\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if rc := run([]string{"--config", cfg}, &out, &errOut); rc != 1 || !strings.Contains(errOut.String(), "line 3: not a duration") {
		t.Errorf("bad duration: exit %d, %q", rc, errOut.String())
	}
}

// TestDemoWordAfterFlags: 'pdtop record -o FILE demo' and 'pdtop
// snapshot --window 2s demo' work like the word first; a flag's value
// named demo stays a value.
func TestDemoWordAfterFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.pdrec")
	var out, errOut bytes.Buffer
	if rc := run([]string{"record", "-o", file, "demo", "--duration", "1500ms"}, &out, &errOut); rc != 0 {
		t.Fatalf("record -o FILE demo: exit %d: %s", rc, errOut.String())
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("no recording: %v", err)
	}
	out.Reset()
	if rc := run([]string{"snapshot", "--window", "2s", "--width", "100", "demo"}, &out, &errOut); rc != 0 ||
		!strings.Contains(out.String(), "Token cadence") {
		t.Fatalf("snapshot … demo: exit %d: %s", rc, errOut.String())
	}
	for _, c := range []struct {
		args []string
		demo bool
		rest []string
	}{
		{[]string{"demo", "-o", "f"}, true, []string{"-o", "f"}},
		{[]string{"-o", "f", "demo"}, true, []string{"-o", "f"}},
		{[]string{"-o", "demo"}, false, []string{"-o", "demo"}},
		{[]string{"--discovery", "demo"}, true, []string{"--discovery"}},
		{[]string{"-o=x", "--scenario", "steady", "demo"}, true, []string{"-o=x", "--scenario", "steady"}},
		{[]string{"--", "demo"}, false, []string{"--", "demo"}},
	} {
		rest, demo := demoArg(c.args, func(fs *flag.FlagSet) {
			var vf viewFlags
			var tf targetFlags
			vf.registerScrape(fs)
			tf.register(fs)
			fs.String("o", "", "")
		})
		if demo != c.demo || strings.Join(rest, " ") != strings.Join(c.rest, " ") {
			t.Errorf("demoArg(%q) = %q, %v; want %q, %v", c.args, rest, demo, c.rest, c.demo)
		}
	}
}

// TestSnapshotQuietWhenPiped: the "collecting…" line is for a person at
// a terminal; a script's stderr stays empty on success.
func TestSnapshotQuietWhenPiped(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"snapshot", "demo", "--window", "2s", "--format", "json"}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d", rc)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr not a terminal, yet: %q", errOut.String())
	}
	if got := span(10 * 1e9); got != "10s" {
		t.Errorf("span(10s) = %q", got)
	}
	if got := span(90 * 1e9); got != "1m30s" {
		t.Errorf("span(90s) = %q", got)
	}
	if got := span(120 * 1e9); got != "2m" {
		t.Errorf("span(2m) = %q", got)
	}
}
