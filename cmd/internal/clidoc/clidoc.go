// Package clidoc writes a cobra command tree as a Markdown reference (every command, its use
// line, what it does and each flag with its default), the way gh generates its manual: the
// page comes from the commands themselves, and a test rewrites it (-update) or fails when it
// is stale, so the reference cannot drift from the binary.
package clidoc

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/debugflow/debugflow/cmd/internal/lazyflags"
)

// Options say what to write.
type Options struct {
	// Title is the page's heading; Intro the paragraph under it (Markdown).
	Title, Intro string
	// Generator is the command that rewrites the page, named in its header comment.
	Generator string
	// Skip leaves a command (and its subcommands) out when it returns true: one documented
	// elsewhere.
	Skip func(*cobra.Command) bool
}

// Write renders root and every available command under it, depth first in cobra's order.
func Write(w io.Writer, root *cobra.Command, o Options) error {
	lazyflags.BindAll(root) // the page lists every command's flags
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n<!-- Generated from the command tree by %s. Do not edit. -->\n\n", o.Title, o.Generator)
	if o.Intro != "" {
		b.WriteString(strings.TrimSpace(o.Intro) + "\n\n")
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || (o.Skip != nil && o.Skip(c)) || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c != root || c.Runnable() || c.HasAvailableLocalFlags() {
			writeCommand(&b, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "## %s\n\n", c.CommandPath())
	if c.Short != "" {
		b.WriteString(cell(c.Short, false) + "\n\n")
	}
	if c.Runnable() {
		fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
	}
	var rows []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "[]" && f.DefValue != "false" && f.DefValue != "0" {
			def = "`" + strings.ReplaceAll(f.DefValue, "`", "'") + "`"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", name, f.Value.Type(), def, cell(f.Usage, true)))
	})
	if len(rows) > 0 {
		b.WriteString("| flag | type | default | meaning |\n|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n\n")
	}
	if sub := available(c); len(sub) > 0 {
		fmt.Fprintf(b, "Subcommands: %s.\n\n", strings.Join(sub, ", "))
	}
}

func available(c *cobra.Command) []string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, "`"+s.Name()+"`")
		}
	}
	return names
}

// cell makes text safe inside a Markdown table cell (or a paragraph): one line, pipes escaped.
func cell(s string, table bool) string {
	s = strings.Join(strings.Fields(s), " ")
	if table {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	return s
}
