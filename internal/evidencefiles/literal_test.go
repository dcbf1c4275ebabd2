package evidencefiles

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// The names of the folder's files are written once, here: no other package of the tree spells
// one as a string literal (a test may, to check the file is there). A second spelling is how
// the reserved-name list and the readers drifted from the writers before (issue 24).
func TestNamesAreDefinedOnce(t *testing.T) {
	names := map[string]bool{DmesgGlob: true, DmesgPrefix: true}
	for _, f := range Files {
		if !strings.Contains(f.Name, "<") {
			names[f.Name] = true
		}
		if f.Prefix != "" && strings.HasSuffix(f.Prefix, "_") {
			names[f.Prefix] = true
		}
	}
	root := filepath.Join("..", "..")
	self, _ := filepath.Abs(".")
	checked := 0
	for _, top := range []string{"steps", "internal", "templates", "cmd"} {
		n, err := testenv.GoSource(filepath.Join(root, top), []string{self}, func(fset *token.FileSet, _ string, file *ast.File) {
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					t.Errorf("%s: %q: use the evidencefiles constant", fset.Position(lit.Pos()), s)
				}
				return true
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		checked += n
	}
	if checked < 50 {
		t.Fatalf("only %d Go files checked: is the tree where the test looks?", checked)
	}
}
