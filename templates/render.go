package templates

import (
	"bytes"
	"embed"
	"fmt"
	"github.com/debugflow/debugflow/internal/textsafe"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"

	"github.com/debugflow/debugflow/internal/evidencefiles"
)

//go:embed files/*.tmpl
var files embed.FS

// file is one staged file: its name in the artifact directory and its mode.
type file struct {
	name string
	mode fs.FileMode
}

// staged lists the files Stage writes, in order. Scripts are executable so they run as
// ./run_reproducer.sh inside the tmate session.
var staged = []file{
	{evidencefiles.RunReproducerScript, 0o755},
	{evidencefiles.RunSanitizerScript, 0o755},
	{evidencefiles.StandaloneScript, 0o755},
	{evidencefiles.EnvScript, 0o644},
	{evidencefiles.ReadmeFile, 0o644},
}

// Names returns the names of the files Stage writes, in the order it writes them.
func Names() []string {
	names := make([]string, len(staged))
	for i, f := range staged {
		names[i] = f.name
	}
	return names
}

// Mode returns the file mode Stage gives the staged file name (0 for an unknown name).
func Mode(name string) fs.FileMode {
	for _, f := range staged {
		if f.name == name {
			return f.mode
		}
	}
	return 0
}

// parsed is the templates, parsed on first use: debugflow-step starts about fifteen times
// per job and only the stage step renders them. A sync.Once and a function, not
// sync.OnceValue in a package variable, and the functions' map built here: either would be
// made at every start.
func parsed() *template.Template {
	parseOnce.Do(func() {
		funcs := template.FuncMap{
			"shellQuote": textsafe.ShellWord,
			"shellJoin":  shellJoin,
			"pyString":   pyString,
			"shellGlob":  shellGlob,
			"mdCode":     mdCode,
			"mdCell":     mdCell,
		}
		parsedTemplates = template.Must(template.New("").Funcs(funcs).Option("missingkey=error").ParseFS(files, "files/*.tmpl"))
	})
	return parsedTemplates
}

var (
	parseOnce       sync.Once
	parsedTemplates *template.Template
)

// view is what the templates see: the parameters plus the argument lists computed in Go, where
// quoting is easier to get right than in template syntax.
type view struct {
	StageParams
	// ReproduceArgs are the flags of `debugflow-step reproduce`, one quoted flag per element.
	ReproduceArgs []string
	// SanitizeArgs are the flags of `debugflow-step sanitize`, one quoted flag per element.
	SanitizeArgs []string
	// PathWords are the test paths as shell words.
	PathWords string
	// PathList are the test paths as Markdown code spans.
	PathList string
	// Fence opens and closes the README's code blocks: longer than any run of backticks in a
	// value, so no value can end a block early.
	Fence string
	// ShellExports are the exported variables other than PATH; Path is PATH's value ("" when
	// not exported).
	ShellExports []EnvVar
	Path         string
}

func newView(p StageParams) view {
	spans := make([]string, len(p.Paths))
	for i, path := range p.Paths {
		spans[i] = mdCode(path)
	}
	v := view{
		StageParams:   p,
		ReproduceArgs: p.reproduceArgs(`"$count"`),
		SanitizeArgs:  p.sanitizeArgs(),
		PathWords:     shellJoin(p.Paths),
		PathList:      strings.Join(spans, " "),
		Fence:         mdFence(p.strings()...),
	}
	// The file ends with the code and one line break, whatever the spec's block style left.
	v.StandaloneCode = strings.TrimRight(p.StandaloneCode, " \t\r\n")
	for _, e := range p.Exports {
		if e.Name == "PATH" {
			v.Path = e.Value
			continue
		}
		v.ShellExports = append(v.ShellExports, e)
	}
	return v
}

// Render returns the content of the staged file name (one of Names) for p.
func Render(name string, p StageParams) ([]byte, error) {
	if Mode(name) == 0 {
		return nil, fmt.Errorf("render %s: no such template (have %s)", name, strings.Join(Names(), ", "))
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := parsed().ExecuteTemplate(&buf, name+".tmpl", newView(p)); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// Stage renders every file into p.Out (created if missing) and returns their paths in the order
// of Names. Each file is written to a temporary name and renamed, so a rerun never leaves a
// half-written script, and gets its mode exactly (not filtered by the umask).
func Stage(p StageParams) ([]string, error) {
	contents := make([][]byte, len(staged))
	for i, f := range staged {
		b, err := Render(f.name, p)
		if err != nil {
			return nil, err
		}
		contents[i] = b
	}
	if err := os.MkdirAll(p.Out, 0o755); err != nil {
		return nil, fmt.Errorf("create artifact directory: %w", err)
	}
	paths := make([]string, 0, len(staged))
	for i, f := range staged {
		path := filepath.Join(p.Out, f.name)
		if err := writeFile(path, contents[i], f.mode); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeFile replaces path with data and mode through a temporary file in the same directory.
func writeFile(path string, data []byte, mode fs.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
