package lazyflags

import (
	"testing"

	"github.com/spf13/cobra"
)

// tree is a root with two verbs whose flags are deferred, each named after its verb.
func tree() (root, run, other *cobra.Command) {
	root = &cobra.Command{Use: "prog"}
	for _, name := range []string{"run", "other"} {
		c := &cobra.Command{Use: name, RunE: func(*cobra.Command, []string) error { return nil }}
		Defer(c, func() { c.Flags().String(c.Name()+"-flag", "", "") })
		root.AddCommand(c)
	}
	return root, root.Commands()[1], root.Commands()[0] // cobra sorts: other, run
}

func has(c *cobra.Command, flag string) bool { return c.Flags().Lookup(flag) != nil }

func TestBind(t *testing.T) {
	tests := []struct {
		name               string
		args               []string
		wantRun, wantOther bool
	}{
		{"the verb run", []string{"run", "--run-flag", "x"}, true, false},
		{"the verb with --help", []string{"run", "--help"}, true, false},
		{"the root alone", []string{"--version"}, false, false},
		{"an unknown verb", []string{"nope"}, true, true},
		{"help on a verb reads its flags", []string{"help", "other"}, true, true},
		{"completion reads any verb's flags", []string{cobra.ShellCompRequestCmd, "run", "--"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, run, other := tree()
			Bind(root, tt.args)
			if has(run, "run-flag") != tt.wantRun || has(other, "other-flag") != tt.wantOther {
				t.Errorf("Bind(%q): run bound %v (want %v), other bound %v (want %v)",
					tt.args, has(run, "run-flag"), tt.wantRun, has(other, "other-flag"), tt.wantOther)
			}
		})
	}
}

// TestBindRunsOnce: binding twice (Bind then BindAll, as a test may) registers each flag once;
// pflag would panic on a second registration of the same name.
func TestBindRunsOnce(t *testing.T) {
	root, run, other := tree()
	Bind(root, []string{"run"})
	BindAll(root)
	BindAll(root)
	if !has(run, "run-flag") || !has(other, "other-flag") {
		t.Fatal("BindAll left a verb without its flags")
	}
}

// TestExecuteAfterBind: the bound verb parses its flag through cobra's own Execute.
func TestExecuteAfterBind(t *testing.T) {
	root, run, _ := tree()
	args := []string{"run", "--run-flag", "value"}
	Bind(root, args)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got, _ := run.Flags().GetString("run-flag"); got != "value" {
		t.Errorf("--run-flag = %q, want value", got)
	}
}
