package ghrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/debugflow/debugflow/internal/textsafe"
)

// DownloadOptions configure Download.
type DownloadOptions struct {
	// Names and Patterns (path.Match globs) select artifacts, as gh run
	// download's -n and -p do; with neither, every artifact that has not expired.
	Names    []string
	Patterns []string
	// Dir receives the artifact (a single -n, or a run with one artifact) or
	// one folder per artifact, Dir/<artifact name>/. Empty means
	// debugflow-run-<ID>, which Download then names on Progress.
	Dir string
	// Progress receives the progress bars (nil: discard).
	Progress io.Writer
	// IsTTY draws an updating bar; otherwise one line at start and one at end.
	IsTTY bool
	// Limits bound each archive (zero fields: DefaultExtractLimits).
	Limits ExtractLimits
	// IdleTimeout stops a download when the artifact store sends nothing for
	// this long, waiting for the answer included (0: DefaultIdleTimeout).
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is how long a download may go without receiving a byte.
// The blob store streams steadily; a minute of silence is a stalled connection.
const DefaultIdleTimeout = time.Minute

// errStalled cancels a download whose body stopped arriving.
var errStalled = errors.New("the download stalled")

// idleTimer cancels a request when it is not kicked for d.
type idleTimer struct {
	d time.Duration
	t *time.Timer
}

func newIdleTimer(d time.Duration, cancel context.CancelCauseFunc) *idleTimer {
	return &idleTimer{d: d, t: time.AfterFunc(d, func() { cancel(errStalled) })}
}

func (i *idleTimer) kick() { i.t.Reset(i.d) }
func (i *idleTimer) stop() { i.t.Stop() }

// idleReader kicks the timer whenever bytes arrive.
type idleReader struct {
	r     io.Reader
	timer *idleTimer
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.timer.kick()
	}
	return n, err
}

// Download lists the run's artifacts, downloads the selected ones (following
// the redirect to the blob store, without sending the token there), and
// extracts each safely. It returns the folders it filled, in artifact name order.
func (c *Client) Download(ctx context.Context, repo Repo, runID int64, opts DownloadOptions) ([]string, error) {
	dirs, err := c.download(ctx, repo, runID, opts)
	return dirs, c.scrub(err)
}

func (c *Client) download(ctx context.Context, repo Repo, runID int64, opts DownloadOptions) ([]string, error) {
	opts.Limits = opts.Limits.withDefaults()
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	progress = &redactWriter{w: progress, secrets: c.secrets}
	if opts.Dir == "" {
		opts.Dir = DefaultDownloadDir(runID)
		fmt.Fprintf(progress, "downloading into %s (the default for run %d; choose another folder with -D)\n", shown(opts.Dir), runID)
	}

	all, err := c.listArtifacts(ctx, repo, runID)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, c.noArtifacts(ctx, repo, runID)
	}
	selected, err := selectArtifacts(all, opts.Names, opts.Patterns, runID)
	if err != nil {
		return nil, err
	}
	single := len(selected) == 1 && len(opts.Patterns) == 0 && (len(opts.Names) == 1 || len(all) == 1)
	targets := make([]string, len(selected))
	for i, a := range selected {
		if single {
			targets[i] = opts.Dir
			continue
		}
		if err := checkArtifactName(a.GetName()); err != nil {
			return nil, err
		}
		targets[i] = filepath.Join(opts.Dir, a.GetName())
	}
	// Refuse a non-empty target before spending time on the network: DIR itself too when the
	// artifacts go into folders of it (never beside files that were there).
	for _, t := range append([]string{opts.Dir}, targets...) {
		if entries, err := os.ReadDir(t); err == nil && len(entries) > 0 {
			return nil, fmt.Errorf("%s already exists and is not empty: choose another -D or remove it", t)
		}
	}
	// A run still going has uploaded some of its artifacts (a matrix leg that finished): its
	// verdict is not the run's yet. Unknown (the request failed) says nothing.
	if run, _, err := c.gh.Actions.GetWorkflowRunByID(ctx, repo.Owner, repo.Name, runID); err == nil && run.GetStatus() != "" && run.GetStatus() != "completed" {
		fmt.Fprintf(progress, "note: run %d is still %s: these are the artifacts it has uploaded so far; download again "+
			"into a fresh folder once it has completed (debugflow watch %d)\n", runID, shown(run.GetStatus()), runID)
	}
	for i, a := range selected {
		if err := c.downloadOne(ctx, repo, a, targets[i], opts, progress); err != nil {
			return targets[:i], err
		}
	}
	return targets, nil
}

// maxArtifactPages bounds artifact listing (100 per page).
const maxArtifactPages = 10

func (c *Client) listArtifacts(ctx context.Context, repo Repo, runID int64) ([]*github.Artifact, error) {
	opts := &github.ListOptions{PerPage: 100}
	var all []*github.Artifact
	seen := map[int64]bool{}
	visited := map[int]bool{}
	for page := 0; page < maxArtifactPages; page++ {
		visited[max(opts.Page, 1)] = true // page 0 is page 1
		list, resp, err := c.gh.Actions.ListWorkflowRunArtifacts(ctx, repo.Owner, repo.Name, runID, opts)
		if err != nil {
			return nil, explain(err, fmt.Sprintf("list artifacts of run %d in %s", runID, repo), readAccess, repo,
				fmt.Sprintf("run %d does not exist in %s: check the run id and -R", runID, repo), c.now())
		}
		for _, a := range list.Artifacts {
			if !seen[a.GetID()] { // a page read twice (links that loop) adds nothing
				seen[a.GetID()] = true
				all = append(all, a)
			}
		}
		if resp.NextPage == 0 || visited[resp.NextPage] {
			break
		}
		opts.Page = resp.NextPage
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].GetName() < all[j].GetName() })
	return all, nil
}

// noArtifacts explains an empty artifact list from the run's state.
func (c *Client) noArtifacts(ctx context.Context, repo Repo, runID int64) error {
	run, _, err := c.gh.Actions.GetWorkflowRunByID(ctx, repo.Owner, repo.Name, runID)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("run %d in %s has no artifacts yet; reading its state: %w", runID, repo, ctx.Err())
	case err != nil:
		// The list was empty, but whether the run is over is not known: it may still upload.
		cause := shortNetErr(err)
		var er *github.ErrorResponse
		if errors.As(err, &er) && er.Response != nil {
			cause = "HTTP " + er.Response.Status // not go-github's text, which holds the request's URL
		}
		return fmt.Errorf("run %d in %s has no artifacts so far, and its state could not be read (%s): if it is still running, "+
			"wait for it (debugflow watch %d), then download", runID, repo, textsafe.Visible(cause), runID)
	}
	if run.GetStatus() != "completed" {
		return fmt.Errorf("run %d is still %s and has uploaded no artifact yet: wait for it (debugflow watch %d), then download",
			runID, run.GetStatus(), runID)
	}
	return fmt.Errorf("run %d in %s has no artifacts: the job may have failed before its upload step; see %s",
		runID, repo, run.GetHTMLURL())
}

// DefaultDownloadDir is the folder download uses without -D.
func DefaultDownloadDir(runID int64) string { return fmt.Sprintf("debugflow-run-%d", runID) }

// selectArtifacts applies -n and -p (gh run download's rules) and drops
// expired artifacts, explaining what is left out. Every -n must name an
// artifact that has not expired; the patterns together must match one.
func selectArtifacts(all []*github.Artifact, names, patterns []string, runID int64) ([]*github.Artifact, error) {
	var available []string
	for _, a := range all {
		available = append(available, a.GetName())
	}
	has := func() string {
		if len(available) == 0 {
			return "it has none"
		}
		return "it has: " + strings.Join(available, ", ")
	}
	if len(names) == 0 && len(patterns) == 0 {
		var live []*github.Artifact
		for _, a := range all {
			if !a.GetExpired() {
				live = append(live, a)
			}
		}
		if len(live) == 0 {
			return nil, fmt.Errorf("every artifact of run %d has expired (artifact retention): re-run the workflow to get fresh evidence", runID)
		}
		return live, nil
	}
	var out []*github.Artifact
	picked := map[string]bool{}
	for _, name := range names {
		var found *github.Artifact
		for _, a := range all {
			if a.GetName() == name {
				found = a
				break
			}
		}
		switch {
		case found == nil:
			return nil, fmt.Errorf("run %d has no artifact %q; %s", runID, name, has())
		case found.GetExpired():
			return nil, fmt.Errorf("artifact %q of run %d has expired (artifact retention)%s: re-run the workflow to get fresh evidence",
				name, runID, expiredOn(found))
		case !picked[name]:
			picked[name] = true
			out = append(out, found)
		}
	}
	matched := false
	for _, a := range all {
		for _, p := range patterns {
			ok, err := path.Match(p, a.GetName())
			if err != nil {
				return nil, fmt.Errorf("-p %q is not a glob pattern: %w", p, err)
			}
			if !ok {
				continue
			}
			matched = true
			if !a.GetExpired() && !picked[a.GetName()] {
				picked[a.GetName()] = true
				out = append(out, a)
			}
		}
	}
	if len(patterns) > 0 && !matched {
		return nil, fmt.Errorf("no artifact of run %d matches -p %s; %s", runID, strings.Join(quoteAll(patterns), " -p "), has())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("every artifact of run %d that matches -p %s has expired (artifact retention): re-run the workflow to get fresh evidence",
			runID, strings.Join(quoteAll(patterns), " -p "))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

func expiredOn(a *github.Artifact) string {
	if a.ExpiresAt == nil || a.ExpiresAt.IsZero() {
		return ""
	}
	return " on " + a.ExpiresAt.UTC().Format("2006-01-02")
}

// checkArtifactName refuses an artifact name that cannot be a single folder
// name (GitHub forbids these characters; a hostile server might not).
func checkArtifactName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || !filepath.IsLocal(name) {
		return fmt.Errorf("artifact name %q cannot be used as a folder name", name)
	}
	return nil
}

func (c *Client) downloadOne(ctx context.Context, repo Repo, a *github.Artifact, target string, opts DownloadOptions, progress io.Writer) error {
	name := a.GetName()
	op := fmt.Sprintf("download artifact %q of %s", name, repo)
	blobURL, resp, err := c.gh.Actions.DownloadArtifact(ctx, repo.Owner, repo.Name, a.GetID(), 1)
	if err != nil {
		return explainArtifactRedirect(err, resp, op, repo)
	}
	// A relative Location (RFC 9110 allows one) is relative to the request that got it; as
	// it was, the request had no scheme and failed after every retry.
	if !blobURL.IsAbs() && resp != nil && resp.Request != nil {
		blobURL = resp.Request.URL.ResolveReference(blobURL)
	}

	tmp, err := os.CreateTemp("", "debugflow-artifact-*.zip")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()

	// The idle timer runs from the request on: a store that never answers and
	// a body that stops half way are both a stalled download.
	blobCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := newIdleTimer(opts.IdleTimeout, cancel)
	defer idle.stop()
	var received int64
	stalled := func() error {
		got := "before the first byte"
		if received > 0 {
			got = "after " + formatBytes(received)
		}
		return fmt.Errorf("%s: the artifact store %s sent nothing for %s (%s): the download stalled; try again, "+
			"or wait longer with --idle-timeout (now %s)", op, blobURL.Host, opts.IdleTimeout, got, opts.IdleTimeout)
	}
	req, err := http.NewRequestWithContext(blobCtx, http.MethodGet, blobURL.String(), nil)
	if err != nil {
		return fmt.Errorf("%s: bad download URL from GitHub", op)
	}
	res, err := c.blob.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case errors.Is(context.Cause(blobCtx), errStalled):
			return stalled()
		}
		return fmt.Errorf("%s from %s: %s", op, blobURL.Host, shortNetErr(err))
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: the artifact store %s answered %s (the signed link may have expired: try again)",
			op, blobURL.Host, res.Status)
	}
	total := res.ContentLength
	if total <= 0 {
		total = a.GetSizeInBytes()
	}
	if total > opts.Limits.MaxBytes {
		return fmt.Errorf("%s: the archive is %s, over the %s limit (raise it with --max-size)",
			op, formatBytes(total), formatBytes(opts.Limits.MaxBytes))
	}
	// The bar cuts the name: the secrets are masked before, so no part of one is shown.
	bar := newProgressBar(progress, opts.IsTTY, redact(name, c.secrets.all()), total, c.now)
	idle.kick()
	body := idleReader{r: io.LimitReader(res.Body, opts.Limits.MaxBytes+1), timer: idle}
	n, err := io.Copy(io.MultiWriter(tmp, bar, countWriter{&received}), body)
	if err != nil {
		bar.fail()
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case errors.Is(context.Cause(blobCtx), errStalled):
			return stalled()
		}
		return fmt.Errorf("%s: %s", op, shortNetErr(err))
	}
	idle.stop()
	if n > opts.Limits.MaxBytes {
		bar.fail()
		return fmt.Errorf("%s: the archive is larger than the %s limit (raise it with --max-size)", op, formatBytes(opts.Limits.MaxBytes))
	}
	bar.done()
	stats, err := ExtractZip(ctx, tmp, n, target, opts.Limits)
	if err != nil {
		return fmt.Errorf("%s: extract into %s: %w", op, target, err)
	}
	fmt.Fprintf(progress, "extracted %q: %d files, %s into %s\n", name, stats.Files, formatBytes(stats.Bytes), shown(target))
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct{ n *int64 }

func (c countWriter) Write(p []byte) (int, error) {
	*c.n += int64(len(p))
	return len(p), nil
}

// explainArtifactRedirect explains a failed GET .../artifacts/ID/zip, which
// go-github reports by status only.
func explainArtifactRedirect(err error, resp *github.Response, op string, repo Repo) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	ae := &APIError{Op: op, Status: status, Err: err}
	switch status {
	case 0:
		return fmt.Errorf("%s: %s", op, shortNetErr(err))
	case http.StatusGone, http.StatusNotFound:
		ae.Hint = "the artifact has expired or was deleted: re-run the workflow to get fresh evidence."
	case http.StatusUnauthorized:
		ae.Hint = rejectedTokenHint
	case http.StatusForbidden, http.StatusTooManyRequests:
		ae.Hint = readAccess.hint(repo) + " (or the rate limit is used up: wait and try again)"
	default:
		if status >= 500 {
			ae.Hint = "GitHub had a server error and retries did not help: try again in a few minutes."
		}
	}
	return ae
}

// ParseSize parses a size such as 4GiB, 500MiB, 10M or 123456 (bytes).
// Units are binary and case-insensitive: K, KB, KiB = 1024.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i > 15 {
		return 0, fmt.Errorf("size %q: expected a whole number with an optional unit (B, KiB, MiB, GiB, TiB)", s)
	}
	var n int64
	for _, d := range t[:i] {
		n = n*10 + int64(d-'0')
	}
	var shift uint
	switch strings.TrimSpace(t[i:]) {
	case "", "b":
	case "k", "kb", "kib":
		shift = 10
	case "m", "mb", "mib":
		shift = 20
	case "g", "gb", "gib":
		shift = 30
	case "t", "tb", "tib":
		shift = 40
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB, GiB or TiB)", s, t[i:])
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("size %q must be more than zero", s)
	}
	return n << shift, nil
}

// progressBar reports download progress: an updating bar on a terminal
// (redrawn at most every 100ms), a start and an end line otherwise.
type progressBar struct {
	out       io.Writer
	tty       bool
	name      string
	total     int64
	n         int64
	now       func() time.Time
	lastDraw  time.Time
	lastShown int64
}

const progressEvery = 100 * time.Millisecond

func newProgressBar(out io.Writer, tty bool, name string, total int64, now func() time.Time) *progressBar {
	p := &progressBar{out: out, tty: tty, name: name, total: total, now: now, lastShown: -1}
	if tty {
		p.draw()
	} else {
		size := "unknown size"
		if total > 0 {
			size = formatBytes(total)
		}
		fmt.Fprintf(out, "downloading %q (%s)\n", name, size)
	}
	return p
}

func (p *progressBar) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if p.tty && p.now().Sub(p.lastDraw) >= progressEvery {
		p.draw()
	}
	return len(b), nil
}

func (p *progressBar) draw() {
	p.lastDraw = p.now()
	if p.n == p.lastShown {
		return
	}
	p.lastShown = p.n
	const width = 30
	if p.total > 0 {
		frac := min(float64(p.n)/float64(p.total), 1)
		filled := int(frac * width)
		fmt.Fprintf(p.out, "\r\x1b[K%s [%s%s] %3.0f%% %s/%s", truncate(shown(p.name), 30), strings.Repeat("#", filled),
			strings.Repeat(".", width-filled), frac*100, formatBytes(p.n), formatBytes(p.total))
		return
	}
	fmt.Fprintf(p.out, "\r\x1b[K%s %s", truncate(shown(p.name), 30), formatBytes(p.n))
}

func (p *progressBar) done() {
	if p.tty {
		if p.total <= 0 {
			p.total = p.n
		}
		p.draw()
		fmt.Fprintln(p.out)
		return
	}
	fmt.Fprintf(p.out, "downloaded %q: %s\n", p.name, formatBytes(p.n))
}

func (p *progressBar) fail() {
	if p.tty {
		fmt.Fprintln(p.out)
	}
}
