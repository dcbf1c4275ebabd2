package steps

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// PreflightLog is the output of the reproducer's collection check, in the artifact directory.
const PreflightLog = evidencefiles.PreflightLog

const (
	// interpreterCheckTimeout bounds "can this interpreter import pytest".
	interpreterCheckTimeout = 60 * time.Second
	// collectTimeout bounds pytest --collect-only: a suite whose collection hangs would hang
	// the sweep too.
	collectTimeout = 10 * time.Minute
)

// CheckReproducerPython resolves the reproducer's interpreter and checks that it finds
// pytest, xdist and pytest_repeat (findModulesScript: the caller runs the collection check
// next, which imports them). It returns the interpreter's path, or a *SetupError that
// names the missing piece and how to install it. A cancelled ctx returns ctx's error.
func CheckReproducerPython(ctx context.Context, env *Env, python string) (string, error) {
	path, se := lookPython(env, python)
	if se != nil {
		return "", se
	}
	_, err := env.runCapture(ctx, interpreterCheckTimeout, path, "-c", findModulesScript(ReproducerModules))
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		what := "cannot look for " + strings.Join(ReproducerModules, ", ")
		if m := reNoModule.FindStringSubmatch(err.Error()); m != nil {
			what = "cannot import " + m[1]
		}
		return "", &SetupError{Cause: fmt.Sprintf("%s (%s) %s (%v): the reproducer needs pytest, pytest-xdist and pytest-repeat: %s, "+
			"or pass --python with another interpreter", python, path, what, err, ReproducerInstallHint())}
	}
	return path, nil
}

// findModulesScript is a Python program that exits with "No module named 'M'" (the words
// of the ImportError) for the first of modules the interpreter cannot find. It finds them
// without importing them: importing pytest costs 0.2-0.3 s of CPU, finding the three modules
// 0.02 s. What a module does when imported is checked by the collection that follows, with
// its traceback in preflight.log.
func findModulesScript(modules []string) string {
	quoted := make([]string, len(modules))
	for i, m := range modules {
		quoted[i] = strconv.Quote(m) // module names are ours, never a spec's
	}
	return "import importlib.util, sys\n" +
		"for m in (" + strings.Join(quoted, ", ") + ",):\n" +
		"    if importlib.util.find_spec(m) is None:\n" +
		"        sys.exit(\"ModuleNotFoundError: No module named '%s'\" % m)\n"
}

// lookPython resolves the reproducer's interpreter; a *SetupError says it is missing.
func lookPython(env *Env, python string) (string, *SetupError) {
	path, err := env.LookPath(python)
	if err != nil {
		return "", &SetupError{Cause: fmt.Sprintf("the reproducer's interpreter %s is not found (%v): pass --python with an "+
			"interpreter that has pytest, pytest-xdist and pytest-repeat (%s)", python, err, ReproducerInstallHint())}
	}
	return path, nil
}

// interpreterLacks is the cause when the interpreter cannot import module, one of ReproducerModules.
func interpreterLacks(python, module string) string {
	return fmt.Sprintf("%s cannot import %s: the reproducer needs pytest, pytest-xdist and pytest-repeat: %s, "+
		"or pass --python with another interpreter", python, module, ReproducerInstallHint())
}

// preflightResult is the outcome of the collection check.
type preflightResult struct {
	// Command is the collection command line (with -k when the reproducer has one).
	Command []string
	// Selected is how many test items the sweep would run (-1 when pytest did not say).
	Selected int
	// Cause is why the sweep cannot work ("" when it can).
	Cause    string
	Duration time.Duration
	// Output is the last lines of the collection output, shown when the cause is set.
	Output []string
	// RepeatMarks are the tests listed with their own repetition count.
	RepeatMarks pytestlog.RepeatMarks
}

// collectCommand is the reproducer's command with --collect-only -q in place of the report
// options: same interpreter, -n, --count, paths, -k and pytest arguments.
func collectCommand(python string, f ReproducerFlags, withSelect bool) []string {
	argv := []string{python, "-m", "pytest", "--collect-only", "-q", "-n", strconv.Itoa(f.Workers), "--count", strconv.Itoa(f.Count)}
	argv = append(argv, f.Paths...)
	if withSelect && f.Select != "" {
		argv = append(argv, "-k", f.Select)
	}
	return append(argv, f.PytestArgs...)
}

// runPreflight runs pytest's collection with the reproducer's exact arguments, environment
// and directory, writing its output to DIR/preflight.log, and names the cause when the sweep
// could not test anything: a collection error, nothing selected, an unknown option. A
// cancelled ctx returns ctx's error.
func runPreflight(ctx context.Context, env *Env, python string, opts ReproduceOptions) (*preflightResult, error) {
	log, err := createEvidenceFile(filepath.Join(opts.Out, PreflightLog))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", PreflightLog, err)
	}
	defer log.Close()
	start := env.Now()
	res := &preflightResult{Command: collectCommand(opts.Python, opts.ReproducerFlags, true)}
	c, sr, err := collect(ctx, env, python, opts, res.Command, log)
	if err != nil {
		return nil, err
	}
	res.Selected, res.RepeatMarks = c.Selected, c.RepeatMarks
	res.Cause = diagnose(c, sr, opts, collectDir(opts.Dir), python)
	if res.Cause == "" && c.Selected == 0 {
		res.Cause = zeroSelected(ctx, env, python, opts, c, log)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if res.Cause != "" {
		res.Output = c.Tail
	}
	res.Duration = env.Now().Sub(start)
	if err := log.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", PreflightLog, err)
	}
	return res, nil
}

// collect runs one collection command, appending its output to log.
func collect(ctx context.Context, env *Env, python string, opts ReproduceOptions, argv []string, log io.Writer) (collection, streamResult, error) {
	fmt.Fprintf(log, "$ %s\n", commandString(argv[0], argv[1:]))
	parser := newCollectParser(opts.Count)
	tctx, cancel := context.WithTimeout(ctx, collectTimeout)
	defer cancel()
	st := newStream(env, streamSpec{
		Path: python, Args: argv[1:], Env: childEnv(env, opts.Env), Dir: opts.Dir,
		Log: log, OnLine: parser.Line, Grace: cancelGrace,
	})
	sr, err := st.Run(tctx)
	if err != nil {
		return collection{}, sr, err
	}
	if ctx.Err() != nil {
		return collection{}, sr, ctx.Err()
	}
	c := parser.Result()
	if sr.Cancelled { // the timeout, not the caller
		c.Summary = fmt.Sprintf("timed out after %s", collectTimeout)
	}
	fmt.Fprintf(log, "# exit code %d\n", sr.ExitCode)
	return c, sr, nil
}

// collectDir is where relative paths in pytest's messages start.
func collectDir(dir string) string {
	if dir != "" {
		return dir
	}
	wd, _ := os.Getwd()
	return wd
}

// diagnose names why the collection says the sweep cannot work, or "" when it can (or when
// the only problem is that nothing was selected, which zeroSelected explains).
func diagnose(c collection, sr streamResult, opts ReproduceOptions, dir, python string) string {
	switch {
	case sr.Cancelled:
		return fmt.Sprintf("pytest --collect-only did not finish within %s: collecting the tests hangs (a conftest.py or a test module "+
			"waiting at import?); see %s", collectTimeout, PreflightLog)
	case c.MissingModule == "pytest" && c.Sections == 0 && c.Selected < 0:
		// "python3: No module named pytest" from python -m pytest itself.
		return interpreterLacks(python, "pytest")
	case sr.Signal != 0:
		return fmt.Sprintf("pytest died of %s while collecting the tests%s; see %s", sr.Signal, lastWords(c), PreflightLog)
	case c.PluginError != "":
		return fmt.Sprintf("plugin %s (from -p or PYTEST_PLUGINS) cannot be loaded: %s; %s", c.Plugin, c.PluginError,
			installHint(c.Plugin))
	case len(c.Unrecognized) > 0:
		return unknownOptions(c.Unrecognized, opts, python)
	case len(c.NotFound) > 0:
		return fmt.Sprintf("test path %s not found in %s", strings.Join(c.NotFound, ", "), dir)
	case c.UsageError != "" && strings.Contains(c.UsageError, "'-k'") && opts.Select != "":
		_, why, _ := strings.Cut(c.UsageError, "':")
		return fmt.Sprintf("-k %q is not a valid pytest expression:%s", opts.Select, why)
	case c.UsageError != "":
		return "pytest rejected the reproducer's command line: " + c.UsageError
	case c.Sections > 0 || c.Errors > 0:
		return collectionError(c, dir, python)
	case sr.ExitCode == 0 || sr.ExitCode == 5:
		return "" // collected; zero selected is explained by zeroSelected
	}
	return fmt.Sprintf("pytest --collect-only exited %d%s; see %s", sr.ExitCode, lastWords(c), PreflightLog)
}

// lastWords is ": <last line of output>" ("" when there was none).
func lastWords(c collection) string {
	if len(c.Tail) == 0 {
		return ""
	}
	return ": " + strings.TrimSpace(c.Tail[len(c.Tail)-1])
}

// collectionError describes the first collection error: which file, which exception, and
// for a missing module the package that provides it.
func collectionError(c collection, dir, python string) string {
	file := relTo(dir, c.SectionFile)
	what := "collecting the tests failed"
	switch c.SectionKind {
	case "conftest":
		what = "loading " + file + " failed"
	case "module":
		what = "collecting " + file + " failed"
	}
	exc := c.Exception
	if exc == "" {
		exc = "see " + PreflightLog
	}
	msg := what + ": " + exc
	if c.MissingModule != "" {
		if c.SectionKind != "" {
			msg = fmt.Sprintf("%s needs module %s, which %s cannot import (%s)", file, c.MissingModule, python, exc)
		}
		msg += "; " + installHint(c.MissingModule)
	}
	if more := c.Errors - 1; more > 0 {
		msg += fmt.Sprintf(" (and %d more collection error(s), see %s)", more, PreflightLog)
	}
	return msg
}

// relTo is path relative to dir when it lies inside it.
func relTo(dir, path string) string {
	if path == "" {
		return "a test file"
	}
	if filepath.IsAbs(path) && dir != "" {
		if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

// unknownOptions explains options pytest does not know: the plugin that adds each, and why
// that plugin is not there (not installed, disabled by -p no:NAME or by
// PYTEST_DISABLE_PLUGIN_AUTOLOAD).
func unknownOptions(opts []string, ro ReproduceOptions, python string) string {
	var named []string
	var reasons []string
	var missing []string
	seen := map[string]bool{}
	for _, o := range opts {
		p, ok := pluginFor(o)
		if !ok && disablesPlugin(ro.PytestArgs, "terminal") {
			// -q, -v, -r, --tb belong to pytest's own terminal plugin, and debugflow reads
			// pytest's terminal output: the reproducer cannot run without it.
			named = append(named, o+" (an option of pytest's terminal plugin, which -p no:terminal turns off; debugflow reads pytest's terminal output, so drop -p no:terminal)")
			continue
		}
		if !ok {
			named = append(named, o+" (a typo, or an option of a plugin that is not installed)")
			continue
		}
		pkg, _ := packageOf(p.Module)
		named = append(named, fmt.Sprintf("%s (added by %s)", o, pkg.Pip))
		if seen[p.Module] {
			continue
		}
		seen[p.Module] = true
		switch {
		case disablesPlugin(ro.PytestArgs, p.Plugin):
			reasons = append(reasons, fmt.Sprintf("the pytest arguments turn %s off (-p no:%s)", pkg.Pip, p.Plugin))
		case envSet(ro.Env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
			reasons = append(reasons, fmt.Sprintf("PYTEST_DISABLE_PLUGIN_AUTOLOAD is set, so %s loads only with -p %s", pkg.Pip, p.Plugin))
		default:
			missing = append(missing, p.Module)
		}
	}
	msg := "pytest does not know " + strings.Join(named, ", ")
	if len(missing) > 0 {
		reasons = append(reasons, fmt.Sprintf("not installed for %s or disabled (PYTEST_ADDOPTS, a pytest config): %s", python, installHint(missing...)))
	}
	if len(reasons) > 0 {
		msg += ": " + strings.Join(reasons, "; ")
	}
	return msg
}

// disablesPlugin reports whether args hold "-p no:NAME" (or "-pno:NAME").
func disablesPlugin(args []string, plugin string) bool {
	for i, a := range args {
		if a == "-pno:"+plugin || (a == "-p" && i+1 < len(args) && args[i+1] == "no:"+plugin) {
			return true
		}
	}
	return false
}

// envSet reports whether the pairs set key to a non-empty value.
func envSet(pairs []string, key string) bool {
	for _, kv := range pairs {
		if k, v, _ := strings.Cut(kv, "="); k == key && v != "" {
			return true
		}
	}
	return false
}

// zeroSelected says which of the paths or -k selected nothing. With -k, the collection runs
// again without it: if that finds tests, -k is the culprit; otherwise the paths (or another
// deselection in the pytest arguments) are.
func zeroSelected(ctx context.Context, env *Env, python string, opts ReproduceOptions, c collection, log io.Writer) string {
	paths := "the paths " + strings.Join(opts.Paths, " ")
	if len(opts.Paths) == 1 {
		paths = opts.Paths[0]
	} else if len(opts.Paths) == 0 {
		paths = "pytest's default test paths (testpaths, or the current directory)"
	}
	without := c
	if opts.Select != "" {
		fmt.Fprintf(log, "\n# nothing selected: collecting again without -k, to tell the paths from -k\n")
		argv := collectCommand(opts.Python, opts.ReproducerFlags, false)
		w, sr, err := collect(ctx, env, python, opts, argv, log)
		if err != nil {
			return fmt.Sprintf("-k %q or %s select no test (collecting without -k to tell which failed: %v)", opts.Select, paths, err)
		}
		if w.Selected > 0 {
			return fmt.Sprintf("-k %q selects none of the %d tests collected from %s (with --count %d): check the expression "+
				"against the test ids in %s", opts.Select, w.Selected, paths, opts.Count, PreflightLog)
		}
		if cause := diagnose(w, sr, opts, collectDir(opts.Dir), python); cause != "" {
			return cause
		}
		without = w
	}
	if without.Deselected > 0 {
		return fmt.Sprintf("the pytest arguments %s deselect all %d tests collected from %s", strings.Join(opts.PytestArgs, " "),
			without.Deselected, paths)
	}
	verb := "hold"
	if len(opts.Paths) == 1 {
		verb = "holds"
	}
	return fmt.Sprintf("%s %s no test pytest collects (files test_*.py or *_test.py with test_* functions, unless the "+
		"pytest configuration says otherwise; a module-level skip also empties a file)", paths, verb)
}
