package lazyre

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

func TestRegexpMatchesAsCompiled(t *testing.T) {
	const expr = `^\[(gw\d+)\] (PASSED|FAILED) (\S+)$`
	lazy, eager := New(expr), regexp.MustCompile(expr)
	for _, s := range []string{"[gw1] FAILED t.py::x", "[gw1] PASSED t.py::y", "nothing", ""} {
		if lazy.MatchString(s) != eager.MatchString(s) || len(lazy.FindStringSubmatch(s)) != len(eager.FindStringSubmatch(s)) {
			t.Errorf("%q: lazy and eager disagree", s)
		}
	}
	if lazy.String() != expr || lazy.NumSubexp() != 3 || lazy.Get() != lazy.Get() {
		t.Error("the lazy Regexp is not the one compiled expression")
	}
}

// Concurrent first uses compile once and all see the same expression.
func TestRegexpConcurrentFirstUse(t *testing.T) {
	r := New(`a+b`)
	var wg sync.WaitGroup
	got := make([]*regexp.Regexp, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = r.Get() }()
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("two compilations")
		}
	}
}

// An invalid expression panics on first use, as regexp.MustCompile does at start-up: every
// package's tests use its patterns, so a typo still fails the tests.
func TestRegexpInvalidPanicsOnUse(t *testing.T) {
	r := New(`(`) // no panic here
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic on use")
		}
	}()
	r.MatchString("x")
}

// TestEveryPatternInTheModuleCompiles compiles every pattern the module's code declares with
// New: patterns only a rare path uses would otherwise first fail on a user's runner. New
// keeps no list of its patterns (it must not run anything at initialisation), so the test
// reads them from the source, like a linter: every call of New outside the tests.
func TestEveryPatternInTheModuleCompiles(t *testing.T) {
	patterns := modulePatterns(t, moduleRoot(t))
	if len(patterns) < 50 {
		t.Fatalf("found %d patterns in the module's source, want the parsers' hundred-odd", len(patterns))
	}
	t.Logf("%d patterns", len(patterns))
	for pos, expr := range patterns {
		if _, err := regexp.Compile(expr); err != nil {
			t.Errorf("%s: %v", pos, err)
		}
	}
}

// The scanner finds a pattern written as literals joined by +, names one that does not
// compile, and refuses an argument it cannot read.
func TestModulePatternsScanner(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import re "github.com/debugflow/debugflow/internal/lazyre"

var (
	ok     = re.New(` + "`^a` + \"b+\"" + `)
	broken = re.New("[unclosed")
	dynamic = re.New(prefix + "x")
)
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A test file's patterns are the tests' business (this file has invalid ones on purpose).
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nvar x = lazyre.New(`(`)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errs []string
	got := scanPatterns(dir, func(pos token.Position, msg string) { errs = append(errs, msg) })
	var exprs []string
	for _, e := range got {
		exprs = append(exprs, e)
	}
	if len(got) != 2 || !contains(exprs, "^ab+") || !contains(exprs, "[unclosed") {
		t.Errorf("patterns %q, want ^ab+ and [unclosed", exprs)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "string constant") {
		t.Errorf("errors %q, want one about the argument that is not a string constant", errs)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// moduleRoot is the folder of the module's go.mod, above this package.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// modulePatterns is every New pattern of the module's non-test Go files, by position.
func modulePatterns(t *testing.T, root string) map[string]string {
	return scanPatterns(root, func(pos token.Position, msg string) { t.Errorf("%s: %s", pos, msg) })
}

const importPath = "github.com/debugflow/debugflow/internal/lazyre"

// scanPatterns parses the non-test Go files under root (testenv.GoSource) and returns the
// argument of every call of this package's New by its position; report gets an argument that
// is not a string constant written in place, or a file that does not parse.
func scanPatterns(root string, report func(token.Position, string)) map[string]string {
	found := map[string]string{}
	_, err := testenv.GoSource(root, nil, func(fset *token.FileSet, _ string, f *ast.File) {
		name := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
				name = "lazyre"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "New" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != name {
				return true
			}
			pos := fset.Position(call.Pos())
			if expr, ok := stringConstant(call.Args[0]); ok {
				found[pos.String()] = expr
			} else {
				report(pos, "the argument of lazyre.New is not a string constant written in place (literals joined by +)")
			}
			return true
		})
	})
	if err != nil {
		report(token.Position{Filename: root}, err.Error())
	}
	return found
}

// stringConstant is the value of a string literal or of literals joined by +.
func stringConstant(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := stringConstant(e.X)
		y, ok2 := stringConstant(e.Y)
		return x + y, ok1 && ok2
	case *ast.ParenExpr:
		return stringConstant(e.X)
	}
	return "", false
}
