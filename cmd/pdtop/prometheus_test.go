package main

import (
	"bytes"
	"strings"
	"testing"
)

// Bad Prometheus-backend flags stop pdtop before the TUI, with an error
// naming the flag; 'pdtop rules' prints a rule file.
func TestPrometheusFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--prometheus", "http://p:9090", "--gateway", "http://gw:29000"}, "drop the --gateway"},
		{[]string{"--selector", `{a="b"}`, "--gateway", "http://gw:29000"}, "--selector needs --prometheus"},
		{[]string{"--prometheus", "http://p:9090", "--selector", `up{a="b"}`}, "--selector"},
		{[]string{"--prometheus", "http://p:9090", "--rows", "0"}, "--rows 0"},
		{[]string{"--prometheus", "p:9090"}, "want an http or https URL"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errb.String(), c.want)
		}
	}
}

func TestRulesCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"rules", "--window", "30s", "--selector", `{namespace="serving"}`}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"groups:", "record: pdtop:pool:waiting:last", "pdtop_window: 30s", `namespace="serving"`} {
		if !strings.Contains(s, want) {
			t.Errorf("rules output lacks %q", want)
		}
	}
	var errOnly bytes.Buffer
	if code := run([]string{"rules", "--selector", "{"}, &out, &errOnly); code == 0 || !strings.Contains(errOnly.String(), "--selector") {
		t.Errorf("bad selector: exit %d %q", code, errOnly.String())
	}
}
