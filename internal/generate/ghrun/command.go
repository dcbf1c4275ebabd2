package ghrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// finish masks the tokens in err and makes sure it carries an exit code.
func finish(f *Env, err error) error {
	if err == nil {
		return nil
	}
	err = redactErr(err, f.secrets().all()...)
	var exit *ExitError
	if errors.As(err, &exit) {
		return err
	}
	return &ExitError{Code: ExitCode(err), Err: err}
}

// interrupted turns a cancellation into a clean ExitInterrupted error that
// says what state things were left in.
func interrupted(ctx context.Context, err error, what string) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted: " + what)}
	}
	return err
}

// RunSelector is the RUN_ID | --latest choice of watch and download.
type RunSelector struct {
	Arg    string // a run id or a run URL
	Latest bool   // the newest run of the debug workflow
	Branch string // with Latest: only runs on this branch
}

// resolveRun finds the repository and the run id the user means.
func (f *Env) resolveRun(ctx context.Context, flags RepoFlags, sel RunSelector, log io.Writer) (Repo, *Client, RunRef, error) {
	var run RunRef
	switch {
	case sel.Arg != "" && sel.Latest:
		return Repo{}, nil, run, usageError(errors.New("give a RUN_ID or --latest, not both"))
	case sel.Arg == "" && !sel.Latest:
		return Repo{}, nil, run, usageError(errors.New("which run? give a RUN_ID (or a run URL), or --latest for the newest run of the debug workflow"))
	case sel.Arg != "":
		f.secrets().add(userinfoSecrets(sel.Arg)...)
		id, urlRepo, err := ParseRunArg(sel.Arg)
		if err != nil {
			return Repo{}, nil, run, usageError(err)
		}
		run.ID = id
		if urlRepo != nil && flags.Repo == "" {
			// A pasted URL is not a host you chose: an Enterprise host must also be
			// the one configured, or its token would go wherever a link points.
			configured := flags.Hostname
			if configured == "" {
				configured = f.getenv(EnvGHHost)
			}
			if IsEnterprise(urlRepo.Host) && !sameHost(urlRepo.Host, configured) && !f.apiHostIs(urlRepo.Host) {
				return Repo{}, nil, run, usageError(fmt.Errorf("the run URL is on %s, which is neither github.com nor the configured host: "+
					"if it is your GitHub Enterprise Server, set %s=%s (or pass -R %s/OWNER/REPO with the run id)",
					urlRepo.Host, EnvGHHost, urlRepo.Host, urlRepo.Host))
			}
			flags.Repo = urlRepo.Host + "/" + urlRepo.Owner + "/" + urlRepo.Name // the URL's host, even github.com
		}
	}
	repo, host, err := f.resolve(ctx, flags)
	if err != nil {
		return Repo{}, nil, run, err
	}
	client, err := f.client(ctx, host, log)
	if err != nil {
		return Repo{}, nil, run, err
	}
	if sel.Latest {
		if f.Workflow == nil {
			return Repo{}, nil, run, usageError(errors.New("--latest needs the debug spec to know the workflow file"))
		}
		wf, err := f.Workflow()
		if err != nil {
			return Repo{}, nil, run, usageError(fmt.Errorf("load the debug spec: %w", err))
		}
		run, err = client.LatestRun(ctx, repo, wf.File, sel.Branch)
		if err != nil {
			return Repo{}, nil, run, err
		}
		fmt.Fprintf(log, "latest run of %s: %d %s\n", wf.File, run.ID, shown(run.HTMLURL))
	}
	return repo, client, run, nil
}

// conclusionError turns a run's conclusion into the command's result. A run
// without a conclusion gets the commands that ask again (again).
func conclusionError(c Conclusion, run RunRef, again resume) error {
	if c.ExitCode() == ExitOK {
		return nil
	}
	msg := fmt.Sprintf("run %d %s", run.ID, c.describe())
	if run.HTMLURL != "" {
		msg += ": " + shown(run.HTMLURL)
	}
	if c == "" {
		msg += "; GitHub may give it later\n" + again.String()
	}
	return &ExitError{Code: c.ExitCode(), Err: fmt.Errorf("%s", msg)}
}

// reportDirs prints the verdict of each extracted folder; a report that fails
// is said and makes the result a failure, the others still print.
func (f *Env) reportDirs(dirs []string, stdout, stderr io.Writer) error {
	if f.Report == nil {
		for _, d := range dirs {
			fmt.Fprintf(stdout, "artifact extracted into %s\n", shown(d))
		}
		return nil
	}
	var failed []error
	for _, d := range dirs {
		if len(dirs) > 1 {
			fmt.Fprintf(stdout, "\n== %s ==\n", shown(d))
		}
		if err := f.Report(d, stdout); err != nil {
			fmt.Fprintf(stderr, "report for %s: %s\n", shown(d), shown(err.Error()))
			failed = append(failed, fmt.Errorf("report for %s: %w", d, err))
		}
	}
	return errors.Join(failed...)
}

// downloadStopped says what an interrupted download left: the artifacts
// extracted in full stay, nothing partial does.
func downloadStopped(complete []string) string {
	msg := "download stopped; no partial folder was kept"
	if len(complete) > 0 {
		msg += "; extracted in full: " + shown(strings.Join(complete, ", "))
	}
	return msg
}
