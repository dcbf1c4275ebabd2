package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// GoSource parses every non-test Go file under root, skipping testdata, dot folders and the
// folders skip names (absolute paths), and calls visit with each; it returns how many files it
// parsed. Tests that read the tree's source as a linter would (a name spelt once, every
// pattern compiling) walk it with this.
func GoSource(root string, skip []string, visit func(fset *token.FileSet, path string, f *ast.File)) (int, error) {
	fset := token.NewFileSet()
	parsed := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			abs, _ := filepath.Abs(path)
			for _, s := range skip {
				if abs == s {
					return filepath.SkipDir
				}
			}
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		parsed++
		visit(fset, path, f)
		return nil
	})
	return parsed, err
}
