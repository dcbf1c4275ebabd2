package clidoc

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestWrite(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "The tool"}
	var n int
	var s []string
	run := &cobra.Command{Use: "run [flags] PATH...", Short: "Run\nthings | fast", Run: func(*cobra.Command, []string) {}}
	run.Flags().IntVarP(&n, "count", "c", 50, "how many | times")
	run.Flags().StringArrayVar(&s, "env", nil, "KEY=VALUE")
	hidden := &cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}}
	skipped := &cobra.Command{Use: "elsewhere", Run: func(*cobra.Command, []string) {}}
	root.AddCommand(run, hidden, skipped)
	var b strings.Builder
	err := Write(&b, root, Options{Title: "tool commands", Generator: "go test -update", Skip: func(c *cobra.Command) bool { return c.Name() == "elsewhere" }})
	if err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"# tool commands\n",
		"Generated from the command tree by go test -update",
		"## tool run\n\nRun things | fast\n",
		"```\ntool run [flags] PATH...\n```",
		"| `-c`, `--count` | int | `50` | how many \\| times |",
		"| `--env` | stringArray |  | KEY=VALUE |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, absent := range []string{"secret", "elsewhere", "## tool\n"} {
		if strings.Contains(got, absent) {
			t.Errorf("%q should not be written:\n%s", absent, got)
		}
	}
}
