package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/debugflow/debugflow/"

// forbidden are packages (a path, or a path and everything under it when it ends in "/") a
// binary must not link: the runner's binary has no use for the generator, the spec, GitHub's
// API, actionlint, the YAML library, the local runners or bisect; no binary links the test
// helpers or the test-only modules.
var forbidden = map[string][]string{
	"debugflow-step": {
		module + "internal/generate", module + "internal/generate/", module + "internal/spec", module + "workflow",
		module + "internal/runner/local", module + "internal/runner/refrun", module + "internal/runner/jobsetup",
		module + "internal/analyse/bisect", module + "internal/analyse/experiment/rounds", module + "internal/release",
		"github.com/goccy/go-yaml", "github.com/google/go-github/", "github.com/rhysd/actionlint",
		module + "internal/testenv", "github.com/google/go-cmp/", "github.com/yuin/goldmark",
	},
	"debugflow": {module + "internal/testenv", "github.com/google/go-cmp/", "github.com/yuin/goldmark"},
}

// TestEachBinaryLinksOnlyWhatItUses holds each binary's dependencies to docs/design.md,
// "Dependencies per binary": every module a binary links is named there with the reason, the
// table names no module it no longer links, the debugflow packages it names are linked, and
// no forbidden package is.
func TestEachBinaryLinksOnlyWhatItUses(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	documented := dependencyTable(t)
	for _, bin := range []string{"debugflow-step", "debugflow"} {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}} {{if .Module}}{{.Module.Path}}{{end}} {{join .Imports \",\"}}",
			"../"+bin).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", bin, err)
		}
		pkgs := map[string]bool{}
		modules := map[string]bool{}
		var httpImporters []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.SplitN(line, " ", 3)
			pkg, mod := f[0], f[1]
			pkgs[pkg] = true
			if mod != "" && mod != strings.TrimSuffix(module, "/") {
				modules[mod] = true
			}
			if strings.HasPrefix(pkg, module) && slices.Contains(strings.Split(f[2], ","), "net/http") {
				httpImporters = append(httpImporters, pkg)
			}
		}
		for pkg := range pkgs {
			for _, bad := range forbidden[bin] {
				if pkg == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(pkg, bad)) || strings.HasPrefix(pkg, bad+"/") {
					t.Errorf("%s links %s, which none of its commands uses", bin, pkg)
				}
			}
		}
		want := documented[bin]
		if len(want) == 0 {
			t.Fatalf("docs/design.md: no row for %s in \"Dependencies per binary\"", bin)
		}
		for mod := range modules {
			if !want[mod] {
				t.Errorf("%s links module %s: say why in docs/design.md, \"Dependencies per binary\" (or stop linking it)", bin, mod)
			}
		}
		for path := range want {
			linked := modules[path] || pkgs[module+path]
			if !linked {
				t.Errorf("docs/design.md says %s links %s, but it does not: update the table", bin, path)
			}
		}
		if bin == "debugflow-step" && !slices.Equal(httpImporters, []string{module + "internal/runner/tmate"}) {
			t.Errorf("debugflow-step: %v import net/http; want only the gate's GitHub keys client (docs/design.md)", httpImporters)
		}
	}
}

// dependencyTable reads the table of docs/design.md, "Dependencies per binary": per binary,
// the modules and debugflow packages (internal/...) its rows name in backquotes.
func dependencyTable(t *testing.T) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Dependencies per binary\n")
	if start < 0 {
		t.Fatal("docs/design.md has no \"Dependencies per binary\" section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	code := regexp.MustCompile("`([^`]+)`")
	table := map[string]map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		bin := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if table[bin] == nil {
			table[bin] = map[string]bool{}
		}
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			if strings.Contains(m[1], ".") || strings.HasPrefix(m[1], "internal/") {
				table[bin][m[1]] = true
			}
		}
	}
	return table
}

// TestCobraOnlyInCmd holds the CLI wiring to cmd/: no package outside it, tests included,
// imports cobra, so an engine is called with an options struct and never parses a command line.
// pflag is imported outside cmd/ by steps/stepflag alone: the flag contract registers the
// options structs' flags on a FlagSet and writes the same flags as argv.
func TestCobraOnlyInCmd(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(goTool, "list", "-test", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		pkg, _, _ = strings.Cut(pkg, " [") // a test variant: "pkg [pkg.test]"
		if strings.HasPrefix(pkg, module+"cmd/") || !strings.HasPrefix(pkg, module) {
			continue
		}
		for _, imp := range strings.Split(imports, ",") {
			if imp == "github.com/spf13/cobra" || imp == "github.com/spf13/pflag" && pkg != module+"steps/stepflag" {
				t.Errorf("%s imports %s: command-line wiring lives in cmd/", pkg, imp)
			}
		}
	}
}
