// Command pdtop is a terminal dashboard for prefill/decode-disaggregated
// LLM-serving fleets: it scrapes the gateway replicas and every worker and
// shows prefill queueing, router-predicted vs worker-actual prefix hits,
// KV transfer, decode admission, token cadence, and restarts side by side.
//
//	pdtop demo                                   # embedded demo fleet
//	pdtop --gateway http://gw:29000 --prefill http://p1:30001 --decode http://d1:30011
//	pdtop --prometheus http://prometheus:9090 --selector '{namespace="serving"}'
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `pdtop — a terminal dashboard for prefill/decode-disaggregated LLM serving

Usage:
  pdtop demo [flags]            run the dashboard on an embedded demo fleet
  pdtop [flags]                 run the dashboard on a real fleet ('pdtop -h' for its flags)
  pdtop --prometheus URL [flags]
                                run the dashboard on a fleet a Prometheus-compatible server scrapes
  pdtop record -o FILE [flags]  record every raw scrape (of targets, or demo) to FILE
  pdtop replay FILE [flags]     play a recording back in the dashboard (--speed, p, ←/→)
  pdtop snapshot [flags]        scrape for a few seconds, print the panels as text or JSON, exit
  pdtop snapshot demo [flags]   the same on the embedded demo fleet
  pdtop sim [flags]             serve only the demo fleet's /metrics endpoints
  pdtop rules [flags]           print recording rules that keep --prometheus cheap at scale
  pdtop help                    this text

Run 'pdtop <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks errors already explained by flag's own output.
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "":
		err = runLive(args, stdout, stderr)
	case "demo":
		err = runDemo(args, stdout, stderr)
	case "sim":
		err = runSim(args, stdout, stderr)
	case "rules":
		err = runRules(args, stdout, stderr)
	case "record":
		err = runRecord(args, stdout, stderr)
	case "replay":
		err = runReplay(args, stdout, stderr)
	case "snapshot":
		err = runSnapshot(args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "pdtop: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(stderr, "pdtop:", err)
	return 1
}

// demoArg finds the word "demo" among a command's arguments — first, or
// after flags ("pdtop record -o x.pdrec demo") — where it is not a flag's
// value, and removes it. flags registers every flag the command may take,
// so that a flag's value is told from the word (a bool flag takes none).
func demoArg(args []string, flags func(*flag.FlagSet)) ([]string, bool) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	flags(fs)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return args, false
		case a == "demo":
			return append(append([]string(nil), args[:i]...), args[i+1:]...), true
		case len(a) > 1 && a[0] == '-':
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					continue
				}
			}
			i++ // the flag's value
		}
	}
	return args, false
}
