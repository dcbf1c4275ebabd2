// Package e2e holds debugflow's end-to-end tests; it has no code of its own.
//
// The tests generate the debug workflow from the embedded default spec (adjusted to this
// machine: a flaky pytest suite, two xdist workers, a small repeat count, temporary paths) and
// run its debug job step by step the way a GitHub runner would, on a simulated runner: each
// `run:` step under `bash --noprofile --norc -eo pipefail` with the workflow, job and step env;
// `${{ }}` expressions evaluated for a pull_request run (no inputs, so every input's default
// applies) or a workflow_dispatch run with inputs; `if:` conditions and step outcomes as GitHub
// computes them; GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files; `timeout-minutes` enforced. An
// expression, condition, action, step key or run: script the simulated runner does not know
// fails the test rather than being guessed at. The real debugflow-step binary runs every debug
// step and real pytest with xdist and pytest-repeat runs the suite; compute-sanitizer,
// nvidia-smi, dmesg and tmate are the repository's Go test doubles, and the GitHub API that
// serves the actor's SSH keys is an httptest server.
//
// What this proves, beyond the unit tests of each package: the emitted YAML is a job a runner
// can execute as written. Every flag the generator writes is one the step binary accepts,
// every expression resolves, step outputs flow into later conditions and timeouts, the
// sanitizer runs exactly when the reproducer failed and receives the failing base test ids,
// workflow inputs reach the steps through env:, the artifact directory holds the evidence at
// both uploads, the tmate gate opens a session limited to the actor's SSH key and is freed by
// the spec's continue file, the staged run_reproducer.sh works inside that session, and the
// job ends red exactly when the bug was reproduced. Steps that install software on a real
// runner (the step binary, apt and pip packages, the project's build) are skipped, and the
// tests check that only those are; the cache tests run the spec's own install and build
// commands (a small C++ project built with ccache) and stand in for GitHub's cache service
// behind actions/cache/restore and save with a folder of entries (actionsCache), so a second
// run restores what the first saved.
//
// runWorkflow runs a whole workflow the same way: jobs in needs order, matrix legs each on a
// fresh runner, artifacts passed from upload-artifact to download-artifact through one store.
// It executes the generated experiment workflow: one leg per ref (each a prepared git tree)
// and the report job that compares them.
//
// The *UnderAct tests (act_test.go) run the same three workflows (the default, the matrix with
// its report job, the experiment with its refs input and report job) under nektos/act, an
// Actions engine that is not ours, on this machine (-P <label>=-self-hosted): act's reading of
// expressions, if:, needs:, matrices, outputs, GITHUB_ENV/GITHUB_PATH and job summaries checks
// the simulator's. The pinned actions are local stand-ins (testdata/act). The simulated runner
// stays where act cannot go: a step cancelled or timed out (act SIGKILLs the step's shell;
// GitHub sends SIGINT, SIGTERM, then kills the process tree), the experiment workflow's
// pull_request run (act expands fromJSON(inputs.refs) before the job's if: and fails on the
// empty input, GitHub skips the job first: nektos/act#1482), and its strict refusal of any
// expression, key or action it does not know; and, for cost, for the many variants of the debug
// job, each of which would be an act run of its own.
package e2e
