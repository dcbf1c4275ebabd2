// Command sanparse parses one compute-sanitizer log with parse/sanitizerlog and
// prints what it found. bench/sanitizer_throughput.sh times it against grep.
//
//	sanparse [-json | -text] [-cpuprofile FILE] LOG
//
// Without -json or -text it prints one line of counts:
//
//	lines=... findings=... errors=... records=... api_errors=... error_summary=... complete=...
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"

	"github.com/debugflow/debugflow/internal/analyse/parse/sanitizerlog"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sanparse:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sanparse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	asText := fs.Bool("text", false, "print the human summary")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: sanparse [-json | -text] [-cpuprofile FILE] LOG")
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()

	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("start profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}

	rep, err := sanitizerlog.Parse(f)
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false) // C++ kernel names are full of < and >
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case *asText:
		return rep.WriteText(stdout)
	}
	records := 0
	for _, e := range rep.Errors {
		records += e.Count
	}
	apiRecords := 0
	for _, a := range rep.APIErrors {
		apiRecords += a.Count
	}
	summary := "none"
	if rep.ErrorSummary != nil {
		summary = strconv.Itoa(*rep.ErrorSummary)
	}
	_, err = fmt.Fprintf(stdout, "lines=%d findings=%d errors=%d records=%d api_errors=%d api_records=%d error_summary=%s complete=%t\n",
		rep.Lines, rep.Findings(), len(rep.Errors), records, len(rep.APIErrors), apiRecords, summary, rep.Complete)
	return err
}
