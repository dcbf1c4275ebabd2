package evidencefiles

import (
	"fmt"
	"slices"
	"strings"
)

// Markdown is the reference table of the evidence folder's files, docs/artifact-files.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# Files in the artifact directory\n\n")
	b.WriteString("<!-- Generated from internal/evidencefiles (Files) by `go test ./internal/evidencefiles -update`; do not edit. -->\n\n")
	b.WriteString("Every file a debug job's steps (`debugflow-step VERB`) and debugflow write into the job's evidence\n")
	b.WriteString("folder, in the order a job writes them. Package `internal/evidencefiles` defines each name once and,\n")
	b.WriteString("for each JSON file, its Go type with a bounded Load and a Write; `ref.json` and `job.json` are\n")
	b.WriteString("packages `refinfo` and `jobmark`. Node ids in every file are relative to pytest's working\n")
	b.WriteString("directory, as pytest prints them.\n\n")
	b.WriteString("| file | written by | read by | holds |\n|---|---|---|---|\n")
	for _, f := range Files {
		readers := f.Readers
		if readers == "" {
			readers = "(a person)"
		}
		writer := f.Writer
		if writer == "" {
			writer = "(none yet)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, cell(writer), cell(readers), cell(f.Schema))
	}
	var prefixes []string
	for _, f := range Files {
		if f.Prefix != "" && !slices.Contains(prefixes, f.Prefix) {
			prefixes = append(prefixes, f.Prefix)
		}
	}
	b.WriteString("\nA spec value that names a file of the folder (`smoke.log`; the smoke step writes the smoke test's\n")
	b.WriteString("output under it, default `smoke.log`) may be none of these names, in any case, nor start with a\n")
	b.WriteString("family's prefix, or the step would overwrite evidence; `debugflow validate` refuses it. The prefixes:\n")
	for i, p := range prefixes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`%s`", p)
	}
	b.WriteString(".\n")
	return b.String()
}

// cell is s for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
