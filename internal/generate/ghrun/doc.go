// Package ghrun is the GitHub side of debugflow: it dispatches a debug workflow
// with typed, validated inputs, finds the run the dispatch created, watches its
// jobs and steps until it completes, and downloads and safely extracts its
// artifacts.
//
// It is a thin layer over github.com/google/go-github/v60: every call takes a
// context, every request goes through a retrying transport (bounded backoff on
// 5xx and rate limits, never on other 4xx), and every GitHub error is turned
// into a sentence that says what to do next. RunDispatch, RunWatch and
// RunDownload are the commands' behaviour; they take an Env so tests inject the
// environment, the HTTP client, git and the writers. The cobra wiring is in
// cmd/debugflow/dispatch, watch and download (cli/cli style).
package ghrun
