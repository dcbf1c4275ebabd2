// Package audit is `debugflow audit`: the security audit of workflows and composite actions.
package audit

import (
	"context"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/readfile"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/audit"
	"github.com/debugflow/debugflow/internal/textsafe"
	"github.com/debugflow/debugflow/internal/version"
)

// maxWorkflowBytes bounds what audit reads from one file: a workflow is a few kilobytes, and a
// path to a huge or endless file must not exhaust memory.
const maxWorkflowBytes = 8 << 20

// AuditOptions is what `debugflow audit` runs with.
type AuditOptions struct {
	Files []string
	// AllowWrite are the scopes a workflow may grant write access to (a release workflow's
	// contents: write); by default none.
	AllowWrite []string
	// Config is the config file's path; "" reads audit.DefaultConfigPath when it exists.
	Config string
	// Format is "text" (one line per finding and a summary), "json" or "sarif".
	Format string
	Stdout io.Writer // findings and the summary line
	Stderr io.Writer // files that could not be audited
}

// auditFormats are the values of --format.
var auditFormats = []string{"text", "json", "sarif"}

// NewCmdAudit returns `debugflow audit`; runF nil runs runAudit.
func NewCmdAudit(f *factory.Factory, runF func(*AuditOptions) error) *cobra.Command {
	o := AuditOptions{Stdout: f.Stdout()}
	cmd := &cobra.Command{
		Use:   "audit FILE...",
		Short: "Security audit of GitHub Actions workflows and composite actions",
		Example: `  debugflow audit .github/workflows/*.yml .github/actions/*/action.yml
  debugflow audit .github/workflows/ci.yml || echo "fix the findings above"
  debugflow audit --allow-write contents .github/workflows/release.yml
  debugflow audit --format sarif .github/workflows/*.yml > audit.sarif`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files, o.Stderr = args, f.Stderr()
			if runF != nil {
				return runF(&o)
			}
			return runAudit(cmd.Context(), o)
		},
	}
	cmd.Flags().StringArrayVar(&o.AllowWrite, "allow-write", nil, "accept `SCOPE`: write (repeatable), e.g. contents for a workflow that creates releases")
	cmd.Flags().StringVar(&o.Config, "config", "", "the audit config `FILE` (default "+audit.DefaultConfigPath+" when it exists)")
	cmd.Flags().StringVar(&o.Format, "format", "text", "output `FORMAT`: text, json or sarif (for GitHub code scanning)")
	var b strings.Builder
	b.WriteString("Check workflows and composite actions (action.yml) against the rules debugflow's own output\nfollows:\n")
	for _, r := range audit.Rules() {
		fmt.Fprintf(&b, "  %-23s %s\n", r.Name, r.Description)
	}
	b.WriteString(`Each finding names file:line:column, the rule and the fix; --format json and sarif add its
severity and confidence. A finding is silenced by a comment on its line (or alone on the line
above) that gives a reason: # debugflow: ignore[RULE] why it is fine.

The config file (` + audit.DefaultConfigPath + `, or --config FILE) accepts, once for the repository:
  allow-write: {contents: [.github/workflows/release.yml]}   # scope: workflows (globs) that may write it
  self-hosted-labels: [gpu-box]                              # runners that are machines you keep
  hosted-labels: [big-linux]                                 # GitHub larger runners

Exit status: 0 no findings, 1 findings, 2 a file could not be read or is not a workflow, a bad
flag or config (the other files are still audited).`)
	cmd.Long = b.String()
	return cmd
}

// loadAuditConfig reads the config file: the one named, or the default one when it exists.
func loadAuditConfig(name string) (*audit.Config, error) {
	explicit := name != ""
	if !explicit {
		name = audit.DefaultConfigPath
		if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	data, err := readWorkflowFile(name)
	if err != nil {
		return nil, cmdutil.UsageErrorf("config %s: %s", textsafe.Visible(name), textsafe.Visible(err.Error()))
	}
	c, err := audit.ParseConfig(data)
	if err != nil {
		return nil, cmdutil.UsageErrorf("config %s: %s", textsafe.Visible(name), textsafe.Visible(err.Error()))
	}
	return c, nil
}

// runAudit audits every file, printing findings as it goes (text) or all at the end (json,
// sarif). A file that cannot be read or parsed is reported on Stderr and the others are
// still audited; that outcome exits 2, since the audit is incomplete, ahead of findings (1).
func runAudit(ctx context.Context, o AuditOptions) error {
	if o.Format == "" {
		o.Format = "text"
	}
	if !slices.Contains(auditFormats, o.Format) {
		return cmdutil.UsageErrorf("--format %s: want one of %s", textsafe.Visible(o.Format), strings.Join(auditFormats, ", "))
	}
	cfg, err := loadAuditConfig(o.Config)
	if err != nil {
		return err
	}
	text := o.Format == "text"
	var all []audit.Finding
	failed := 0
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
		opts := append(cfg.Options(path), audit.WithAllowedWriteScopes(o.AllowWrite...))
		findings, err := cmdutil.Interruptible(ctx, func() ([]audit.Finding, error) {
			return audit.Workflow(path, data, opts...)
		})
		if ctx.Err() != nil {
			return err // Ctrl-C: exit 130 now, nothing more printed
		}
		if err != nil {
			fmt.Fprintf(o.Stderr, "debugflow: cannot %s\n", textsafe.Visible(err.Error())) // "audit PATH: why"
			failed++
			continue
		}
		if text {
			for _, f := range findings {
				fmt.Fprintln(o.Stdout, f.String())
			}
		}
		all = append(all, findings...)
	}
	total := len(all)
	switch o.Format {
	case "json":
		if err := audit.WriteJSON(o.Stdout, all); err != nil {
			return err
		}
	case "sarif":
		if err := audit.WriteSARIF(o.Stdout, all, version.Get().Version); err != nil {
			return err
		}
	}
	switch {
	case failed > 0:
		if total > 0 && text {
			fmt.Fprintf(o.Stdout, "%d finding(s)\n", total)
		}
		return cmdutil.UsageErrorf("%d of %d file(s) could not be audited", failed, len(o.Files))
	case total > 0:
		if text {
			fmt.Fprintf(o.Stdout, "%d finding(s)\n", total)
		}
		return cmdutil.ErrFindings
	}
	if text {
		fmt.Fprintf(o.Stdout, "%d file(s): no findings\n", len(o.Files))
	}
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
		return nil, fmt.Errorf("not a regular file (%s)", readfile.Kind(fi.Mode()))
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
