package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	auditcmd "github.com/debugflow/debugflow/cmd/debugflow/audit"
	bisectcmd "github.com/debugflow/debugflow/cmd/debugflow/bisect"
	bundlecmd "github.com/debugflow/debugflow/cmd/debugflow/bundle"
	"github.com/debugflow/debugflow/cmd/debugflow/dispatch"
	"github.com/debugflow/debugflow/cmd/debugflow/download"
	experimentcmd "github.com/debugflow/debugflow/cmd/debugflow/experiment"
	generatecmd "github.com/debugflow/debugflow/cmd/debugflow/generate"
	initcmd "github.com/debugflow/debugflow/cmd/debugflow/init"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/specsource"
	localcmd "github.com/debugflow/debugflow/cmd/debugflow/local"
	validatecmd "github.com/debugflow/debugflow/cmd/debugflow/validate"
	versioncmd "github.com/debugflow/debugflow/cmd/debugflow/version"
	"github.com/debugflow/debugflow/cmd/debugflow/watch"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
	"github.com/debugflow/debugflow/cmd/internal/reportcmd"
	"github.com/debugflow/debugflow/cmd/internal/versionflag"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/internal/version"
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
		return cmdutil.UsageErrorf("%v%s (see `%s --help`)", err, flagSuggestion(c, err), c.CommandPath())
	}
	root.SetFlagErrorFunc(flagError)
	sp := &specsource.Source{Stderr: stderr}
	gh := ghcmd.NewFactory(f)
	wireGitHub(gh, sp)
	root.AddCommand(
		generatecmd.NewCmdGenerate(f, sp, nil),
		initcmd.NewCmdInit(f, nil),
		validatecmd.NewCmdValidate(f, sp, nil),
		auditcmd.NewCmdAudit(f, nil),
	)
	addSiblingCmds(root, sp, f)
	root.AddCommand(
		dispatch.NewCmdDispatch(gh, nil),
		watch.NewCmdWatch(gh, nil),
		download.NewCmdDownload(gh, nil),
		reportcmd.NewCmdReport(f, nil),
		localcmd.NewCmdLocal(f, sp, nil),
		experimentcmd.NewCmdExperiment(gh, sp, nil),
		bisectcmd.NewCmdBisect(gh, sp, nil),
	)
	// --version prints what `debugflow version` details.
	versionflag.Add(root, func() string { return version.Get().Text("debugflow") })
	root.AddCommand(versioncmd.NewCmdVersion(f, nil), bundlecmd.NewCmdBundle(f, sp, nil))
	for _, c := range root.Commands() {
		// Every command, including those that set their own (dispatch, watch, download):
		// an unknown flag names the one meant.
		c.SetFlagErrorFunc(flagError)
		if slices.Contains(specCommands, c.Name()) {
			sp.AddFlags(c)
		}
	}
	// report's flags wait to be bound for debugflow-step's start-up; debugflow's start-up
	// is mostly actionlint's, so it binds every command's at once.
	lazyflags.BindAll(root)
	return root
}

// specCommands are the commands that read the spec (enable: for the bundle's folder), and so
// the only ones with --spec: init writes a spec, audit and report read workflows and evidence,
// and a flag they ignored would mislead. A new command that calls sp.Load() must be listed here.
var specCommands = []string{"generate", "validate", "disable", "enable", "dispatch", "watch", "download", "local", "experiment", "bundle", "bisect"}

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
