// Package limits holds the bounds that the laptop (spec validation, dispatch) and the runner
// (debugflow-step check-inputs) both enforce, defined once so that they cannot drift.
package limits

// MaxRepeatCount bounds the pytest-repeat count (reproducer.count, the reproduce_count
// input): pytest-repeat collects count copies of every test up front, so a huge count
// exhausts the runner's memory before a test runs.
const MaxRepeatCount = 100000
