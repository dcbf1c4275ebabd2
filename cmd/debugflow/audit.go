package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/audit"
	"github.com/debugflow/debugflow/internal/textsafe"
)

// maxWorkflowBytes bounds what audit reads from one file: a workflow is a few kilobytes, and a
// path to a huge or endless file must not exhaust memory.
const maxWorkflowBytes = 8 << 20

// auditOptions is what `debugflow audit` runs with.
type auditOptions struct {
	Files []string
	// AllowWrite are the scopes a workflow may grant write access to (a release workflow's
	// contents: write); by default none.
	AllowWrite []string
	Stdout     io.Writer // findings and the summary line
	Stderr     io.Writer // files that could not be audited
}

func newAuditCmd(stdout io.Writer) *cobra.Command {
	var allowWrite []string
	cmd := &cobra.Command{
		Use:   "audit FILE...",
		Short: "Security audit of GitHub Actions workflows",
		Example: `  debugflow audit .github/workflows/*.yml
  debugflow audit .github/workflows/ci.yml || echo "fix the findings above"
  debugflow audit --allow-write contents .github/workflows/release.yml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAudit(cmd.Context(), auditOptions{Files: args, AllowWrite: allowWrite, Stdout: stdout, Stderr: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().StringArrayVar(&allowWrite, "allow-write", nil, "accept `SCOPE`: write (repeatable), e.g. contents for a workflow that creates releases")
	var b strings.Builder
	b.WriteString("Check workflows against the rules debugflow's own output follows:\n")
	for _, r := range audit.Rules() {
		fmt.Fprintf(&b, "  %-22s %s\n", r.Name, r.Description)
	}
	b.WriteString(`Each finding names file:line:column, the rule and the fix.

Exit status: 0 no findings, 1 findings, 2 a file could not be read or is not a workflow
(the other files are still audited).`)
	cmd.Long = b.String()
	return cmd
}

// runAudit audits every file, printing findings as it goes. A file that cannot be read or
// parsed is reported on Stderr and the others are still audited; that outcome exits 2,
// since the audit is incomplete, ahead of findings (1).
func runAudit(ctx context.Context, o auditOptions) error {
	total, failed := 0, 0
	for _, path := range o.Files {
		data, err := readWorkflowFile(path)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is in the message already
			}
			fmt.Fprintf(o.Stderr, "debugflow: cannot audit %s: %s\n", textsafe.Visible(path), textsafe.Visible(err.Error()))
			failed++
			continue
		}
		findings, err := interruptible(ctx, func() ([]audit.Finding, error) {
			return audit.Workflow(path, data, audit.WithAllowedWriteScopes(o.AllowWrite...))
		})
		if ctx.Err() != nil {
			return err // Ctrl-C: exit 130 now, nothing more printed
		}
		if err != nil {
			fmt.Fprintf(o.Stderr, "debugflow: cannot %s\n", textsafe.Visible(err.Error())) // "audit PATH: why"
			failed++
			continue
		}
		for _, f := range findings {
			fmt.Fprintln(o.Stdout, f.String())
		}
		total += len(findings)
	}
	switch {
	case failed > 0:
		if total > 0 {
			fmt.Fprintf(o.Stdout, "%d finding(s)\n", total)
		}
		return usageErrorf("%d of %d file(s) could not be audited", failed, len(o.Files))
	case total > 0:
		fmt.Fprintf(o.Stdout, "%d finding(s)\n", total)
		return errFindings
	}
	fmt.Fprintf(o.Stdout, "%d file(s): no findings\n", len(o.Files))
	return nil
}

// readWorkflowFile reads a regular file of at most maxWorkflowBytes. A FIFO or a device
// would block or never end, so they are refused before reading.
func readWorkflowFile(path string) ([]byte, error) {
	// Stat before opening: opening a FIFO for reading blocks until a writer comes.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, errors.New("it is a directory (give the workflow files, e.g. .github/workflows/*.yml)")
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxWorkflowBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if len(data) > maxWorkflowBytes {
		return nil, fmt.Errorf("larger than %d MiB: not a workflow", maxWorkflowBytes>>20)
	}
	return data, nil
}
