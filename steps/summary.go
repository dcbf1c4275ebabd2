package steps

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/debugflow/debugflow/internal/analyse/report"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"github.com/debugflow/debugflow/internal/runner/jobmark"
)

// SummaryMarkdown is the file written by the summary verb.
const SummaryMarkdown = evidencefiles.SummaryMarkdown

// DefaultArtifactName is the upload name of the artifact directory in the
// reference workflow.
const DefaultArtifactName = "debug_cuda_repro_artifacts"

// SummaryOptions configures `debugflow-step summary`.
type SummaryOptions struct {
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)" emit:"always"`
	// Artifact is the name the directory is uploaded under, linked from
	// the Markdown.
	Artifact string `flag:"artifact" default:"debug_cuda_repro_artifacts" usage:"artifact name the directory is uploaded under"`
}

// RunSummary is `debugflow-step summary`: the verdict Markdown goes to
// $GITHUB_STEP_SUMMARY (stdout when unset) and to DIR/summary.md.
func RunSummary(env *Env, opts SummaryOptions) error {
	if opts.Artifact == "" {
		opts.Artifact = DefaultArtifactName
	}
	// Only this job's files: anything older than its marker is set aside first (the report
	// then says what was left over).
	if _, err := jobmark.SetAside(opts.Out); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	v, err := report.Load(opts.Out)
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	md := v.Markdown(opts.Artifact)
	path := filepath.Join(opts.Out, SummaryMarkdown)
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SummaryMarkdown, err)
	}
	if env.Getenv("GITHUB_STEP_SUMMARY") != "" {
		env.Action.AddStepSummary(md)
		fmt.Fprintf(env.Stdout, "summary: wrote the step summary and %s\n", path)
		return nil
	}
	fmt.Fprint(env.Stdout, md)
	fmt.Fprintf(env.Stdout, "summary: wrote %s\n", path)
	return nil
}
