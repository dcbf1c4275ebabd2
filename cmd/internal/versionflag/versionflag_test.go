package versionflag

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func newRoot(out *bytes.Buffer) *cobra.Command {
	root := &cobra.Command{Use: "prog", Short: "a program", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(&cobra.Command{Use: "run", Short: "run it", RunE: func(*cobra.Command, []string) error { return nil }})
	Add(root, func() string { return "prog v1.2.3 {{.Version}}\nbuilt with go\n" })
	root.SetOut(out)
	root.SetErr(out)
	return root
}

func TestVersionFlag(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantErr  string // "" for none
		wantOut  string // the whole output, when set
		contains string
	}{
		// Printed as it is: "{{" would not parse as cobra's version template.
		{name: "long", args: []string{"--version"}, wantOut: "prog v1.2.3 {{.Version}}\nbuilt with go\n"},
		{name: "short", args: []string{"-v"}, wantOut: "prog v1.2.3 {{.Version}}\nbuilt with go\n"},
		{name: "no flag prints the help", args: nil, contains: "Available Commands:"},
		{name: "help lists the flag", args: []string{"--help"}, contains: "-v, --version   version for prog"},
		{name: "unknown verb", args: []string{"nope"}, wantErr: `unknown command "nope" for "prog"`},
		{name: "not a verb's flag", args: []string{"run", "--version"}, wantErr: "unknown flag: --version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			root := newRoot(&out)
			root.SetArgs(tt.args)
			err := root.Execute()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if tt.wantOut != "" && out.String() != tt.wantOut {
				t.Errorf("output %q, want %q", out.String(), tt.wantOut)
			}
			if !strings.Contains(out.String(), tt.contains) {
				t.Errorf("output %q lacks %q", out.String(), tt.contains)
			}
		})
	}
}

func TestAddRefusesARunnableRoot(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Add on a root that runs something did not panic")
		}
	}()
	Add(&cobra.Command{Use: "prog", Run: func(*cobra.Command, []string) {}}, func() string { return "" })
}
