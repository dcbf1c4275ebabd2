package main

import (
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/cmd/internal/reportcmd"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/internal/exitcode"
)

const rootLong = `debugflow turns one typed spec (debugflow.yaml) into a throw-away GitHub Actions debug
workflow for a GPU bug that only shows up on one CI runner type: it builds the project, hammers
the failing tests with pytest-xdist and pytest-repeat, runs compute-sanitizer on what failed,
captures dmesg Xid evidence, uploads it all and opens a tmate shell on that very runner.

Typical session on a debug branch:
  debugflow init                       # write debugflow.yaml (the reference T4 spec) to edit
  debugflow generate -o .github/workflows/debug_cuda_repro.yml   # and .github/debugflow/: the runner's step binary
  debugflow disable                    # park the other workflows on this branch
  git add :/debugflow.yaml :/.github && git commit -m "debug: T4 repro" && git push -u origin HEAD
  # open the pull request: its pull_request run registers the workflow
  debugflow dispatch -f reproduce_count=200 --watch --download ./evidence
  debugflow report ./evidence
  debugflow enable && git commit -am "debug: done"   # safe to merge: nothing debugflow added is left`

// newRootCmd is debugflow with every command, writing to stdout and stderr.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	return newRoot(factory.New(nil, stdout, stderr))
}

// newRoot is debugflow with every command, wired to f.
func newRoot(f *factory.Factory) *cobra.Command {
	stderr := f.Stderr()
	root := &cobra.Command{
		Use:           "debugflow",
		Short:         "Generate and drive GitHub Actions debug workflows for CI-only GPU bugs",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	flagError := func(c *cobra.Command, err error) error {
		return usageErrorf("%v%s (see `%s --help`)", err, flagSuggestion(c, err), c.CommandPath())
	}
	root.SetFlagErrorFunc(flagError)
	sp := &specSource{Stderr: stderr}
	gh := ghcmd.NewFactory(f)
	wireGitHub(gh, sp)
	root.AddCommand(
		newGenerateCmd(f, sp, nil),
		newInitCmd(f),
		newValidateCmd(f, sp, nil),
		newAuditCmd(f, nil),
	)
	addSiblingCmds(root, sp, f)
	addGitHubCmds(root, gh)
	root.AddCommand(reportcmd.NewCmdReport(f, nil))
	addLocalCmd(root, sp, f)
	addExperimentCmd(root, sp, gh)
	addBisectCmd(root, sp, gh)
	addVersion(root, f)
	root.AddCommand(newBundleCmd(f, sp, nil))
	for _, c := range root.Commands() {
		// Every command, including those that set their own (dispatch, watch, download):
		// an unknown flag names the one meant.
		c.SetFlagErrorFunc(flagError)
		if slices.Contains(specCommands, c.Name()) {
			sp.addSpecFlags(c)
		}
	}
	return root
}

// specCommands are the commands that read the spec (enable: for the bundle's folder), and so
// the only ones with --spec: init writes a spec, audit and report read workflows and evidence,
// and a flag they ignored would mislead. A new command that calls sp.load() must be listed here.
var specCommands = []string{"generate", "validate", "disable", "enable", "dispatch", "watch", "download", "local", "experiment", "bundle", "bisect"}

const specFlagUsage = "read the spec from `FILE` (default: debugflow.yaml here, else at the top of the git work tree, else the embedded default with a warning)"

// flagSuggestion names the flag meant by an unknown one ("--wach": did you mean --watch?).
func flagSuggestion(c *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s := spec.Suggest(name, names); s != "" {
		return "; did you mean --" + s + "?"
	}
	return ""
}

// isUsageError recognises cobra's own argument errors, which it does not type.
func isUsageError(err error) bool {
	var ee *exitcode.Error
	if errors.As(err, &ee) {
		return ee.Code == exitUsage
	}
	msg := err.Error()
	for _, s := range []string{"unknown command", "unknown flag", "unknown shorthand flag",
		"accepts ", "if any flags in the group", "requires at least", "requires at most", "invalid argument"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
