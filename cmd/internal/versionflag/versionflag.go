// Package versionflag gives a root command its --version (-v) flag, printing a fixed text.
//
// cobra's own flag (Command.Version with SetVersionTemplate) prints through a text/template
// that it parses at every --version: about 2% of debugflow-step's start-up spent on a
// constant, and a version string holding "{{" would not parse at all. This flag writes the
// text as it is.
package versionflag

import (
	"io"

	"github.com/spf13/cobra"
)

// Name is the flag's name; -v is its shorthand.
const Name = "version"

// Add gives root --version: it prints text() and nothing else. Without the flag root prints
// its help, as a root with nothing to run does; an unknown verb is still an error (cobra
// checks a root's verbs before running it). root must not have a Run of its own.
func Add(root *cobra.Command, text func() string) {
	if root.Run != nil || root.RunE != nil {
		panic("versionflag.Add: " + root.Name() + " already runs something") // a programming error
	}
	root.Flags().BoolP(Name, "v", false, "version for "+root.Name())
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if on, _ := cmd.Flags().GetBool(Name); on {
			_, err := io.WriteString(cmd.OutOrStdout(), text())
			return err
		}
		return cmd.Help()
	}
}
