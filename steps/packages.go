package steps

import (
	"fmt"
	"strings"
)

// pythonPackage is where a Python module comes from: its pip name and its Debian package
// ("" when Debian has none).
type pythonPackage struct {
	Pip, Apt string
}

// knownModules are the top-level modules of well-known pytest plugins (and of libraries test
// suites commonly import) with the packages that provide them. A module not listed here is
// named as it is: most pip names are the module name. A table searched in order, not a map:
// a map literal is built at every start of debugflow-step, and only a failed import reads it.
var knownModules = []struct{ module, pip, apt string }{
	{"pytest", "pytest", "python3-pytest"},
	{"xdist", "pytest-xdist", "python3-pytest-xdist"},
	{"pytest_repeat", "pytest-repeat", "python3-pytest-repeat"},
	{"pytest_rerunfailures", "pytest-rerunfailures", "python3-pytest-rerunfailures"},
	{"pytest_retry", "pytest-retry", ""}, // not packaged by Debian
	{"pytest_timeout", "pytest-timeout", "python3-pytest-timeout"},
	{"pytest_cov", "pytest-cov", "python3-pytest-cov"},
	{"pytest_mock", "pytest-mock", "python3-pytest-mock"},
	{"pytest_asyncio", "pytest-asyncio", "python3-pytest-asyncio"},
	{"pytest_benchmark", "pytest-benchmark", "python3-pytest-benchmark"},
	{"pytest_forked", "pytest-forked", "python3-pytest-forked"},
	{"pytest_order", "pytest-order", "python3-pytest-order"},
	{"pytest_instafail", "pytest-instafail", "python3-pytest-instafail"},
	{"pytest_lazyfixture", "pytest-lazy-fixture", "python3-pytest-lazy-fixture"},
	{"pytest_httpserver", "pytest-httpserver", "python3-pytest-httpserver"},
	{"pytest_randomly", "pytest-randomly", ""},
	{"pytest_env", "pytest-env", ""},
	{"hypothesis", "hypothesis", "python3-hypothesis"},
	{"flaky", "flaky", "python3-flaky"},
	{"numpy", "numpy", "python3-numpy"},
	{"scipy", "scipy", "python3-scipy"},
	{"yaml", "PyYAML", "python3-yaml"},
	{"PIL", "Pillow", "python3-pil"},
	{"cv2", "opencv-python", "python3-opencv"},
	{"sklearn", "scikit-learn", "python3-sklearn"},
	{"psutil", "psutil", "python3-psutil"},
	{"torch", "torch", ""},
}

// pluginOption is a command-line option a plugin adds, for "unrecognized arguments".
type pluginOption struct {
	// Option is the option ("-n"), or a prefix ending in "-" ("--benchmark-").
	Option string
	// Module is the plugin's module; Plugin its name for -p / -p no:NAME.
	Module, Plugin string
}

// pluginOptions are the options of the plugins a reproducer commonly needs; -n and --count
// come from the reproducer itself.
var pluginOptions = []pluginOption{
	{"-n", "xdist", "xdist"}, {"--numprocesses", "xdist", "xdist"}, {"--dist", "xdist", "xdist"},
	{"--maxprocesses", "xdist", "xdist"}, {"--max-worker-restart", "xdist", "xdist"},
	{"--count", "pytest_repeat", "repeat"}, {"--repeat-scope", "pytest_repeat", "repeat"},
	{"--reruns", "pytest_rerunfailures", "rerunfailures"}, {"--reruns-delay", "pytest_rerunfailures", "rerunfailures"},
	{"--only-rerun", "pytest_rerunfailures", "rerunfailures"},
	{"--retries", "pytest_retry", "pytest-retry"}, {"--retry-delay", "pytest_retry", "pytest-retry"},
	{"--cumulative-timing", "pytest_retry", "pytest-retry"},
	{"--timeout", "pytest_timeout", "timeout"}, {"--timeout-method", "pytest_timeout", "timeout"},
	{"--cov", "pytest_cov", "pytest_cov"}, {"--cov-report", "pytest_cov", "pytest_cov"},
	{"--forked", "pytest_forked", "forked"},
	{"--benchmark-", "pytest_benchmark", "benchmark"},
	{"--hypothesis-", "hypothesis", "hypothesispytest"},
	{"--randomly-", "pytest_randomly", "randomly"},
	{"--asyncio-mode", "pytest_asyncio", "asyncio"},
}

// pluginFor returns the plugin that adds opt ("--count=3" and "-n4" included).
func pluginFor(opt string) (pluginOption, bool) {
	name, _, _ := strings.Cut(opt, "=")
	for _, p := range pluginOptions {
		if strings.HasSuffix(p.Option, "-") && strings.HasPrefix(name, p.Option) {
			return p, true
		}
		if name == p.Option || (len(p.Option) == 2 && strings.HasPrefix(name, p.Option) && !strings.HasPrefix(name, "--")) {
			return p, true
		}
	}
	return pluginOption{}, false
}

// topModule is the importable top of a dotted module name ("numpy" for "numpy.linalg").
func topModule(module string) string {
	top, _, _ := strings.Cut(module, ".")
	return top
}

// packageOf is the package that provides module (its own name when unknown).
func packageOf(module string) (pythonPackage, bool) {
	top := topModule(module)
	for _, k := range knownModules {
		if k.module == top {
			return pythonPackage{Pip: k.pip, Apt: k.apt}, true
		}
	}
	return pythonPackage{Pip: top}, false
}

// installHint is "pip install A B (Debian: apt-get install python3-a python3-b)" for the
// modules, or "install the package that provides module X" when none is known.
func installHint(modules ...string) string {
	var pips, apts, unknown []string
	for _, m := range modules {
		p, ok := packageOf(m)
		if !ok {
			unknown = append(unknown, topModule(m))
			continue
		}
		pips = append(pips, p.Pip)
		if p.Apt != "" {
			apts = append(apts, p.Apt)
		}
	}
	var parts []string
	if len(pips) > 0 {
		h := "pip install " + strings.Join(pips, " ")
		if len(apts) > 0 {
			h += fmt.Sprintf(" (Debian: apt-get install %s)", strings.Join(apts, " "))
		}
		parts = append(parts, h)
	}
	if len(unknown) > 0 {
		parts = append(parts, "install the package that provides module "+strings.Join(unknown, ", "))
	}
	return strings.Join(parts, "; ")
}

// ReproducerModules are the modules the reproducer's interpreter must import: pytest and the
// plugins behind -n (pytest-xdist) and --count (pytest-repeat).
var ReproducerModules = []string{"pytest", "xdist", "pytest_repeat"}

// ReproducerInstallHint is how to get all three: "pip install pytest pytest-xdist
// pytest-repeat (Debian: apt-get install python3-pytest python3-pytest-xdist python3-pytest-repeat)".
func ReproducerInstallHint() string { return installHint(ReproducerModules...) }
