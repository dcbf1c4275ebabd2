package testenv

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
)

// FlakyDefaultSeed is the flaky suite's seed when DEBUGFLOW_FLAKY_SEED is not set.
const FlakyDefaultSeed = "debugflow"

// FlakyOutcome is what the flaky suite does in one run of test_kernel[cuda].
type FlakyOutcome struct {
	// Failures are the failing repetitions (an assertion or a crash); Crashes the ones that
	// abort their xdist worker.
	Failures, Crashes int
}

// FlakyDraws is the flaky suite's own draw (flakysuite/test_flaky.py, _draw), repeated here so
// a test knows exactly how many of count repetitions of test_kernel[cuda] fail and crash in a
// run with the given seed, ref name and round (the values of DEBUGFLOW_FLAKY_SEED,
// DEBUGFLOW_EXPERIMENT_REF and DEBUGFLOW_EXPERIMENT_ROUND; "" for an unset one) at the
// suite's FAIL_RATE rate. A count that a run reports otherwise was miscounted: this is how
// the experiment and bisect tests catch trials or failures lost between pytest and the
// counter. A quarter of the failures crash (FlakyCrashShare, as FlakyRepo and FlakyHistory
// make the suite).
func FlakyDraws(seed, ref, round string, rate float64, count int) FlakyOutcome {
	return FlakyDrawsCrashing(seed, ref, round, rate, FlakyCrashShare, count)
}

// FlakyDrawsCrashing is FlakyDraws for a suite made with FlakyRepoCrashing(..., crashShare).
func FlakyDrawsCrashing(seed, ref, round string, rate, crashShare float64, count int) FlakyOutcome {
	var o FlakyOutcome
	for i := 1; i <= count; i++ {
		u := FlakyDraw(seed, ref, round, fmt.Sprintf("test_kernel[cuda-%d-%d]", i, count))
		if u < rate {
			o.Failures++
		}
		// The suite tests u < FAIL_RATE / 4, or u < FAIL_RATE * share (flakySuiteAt): the same float64.
		if u < rate*crashShare {
			o.Crashes++
		}
	}
	return o
}

// FlakyDraw is the suite's uniform draw for one test node name: the first 8 bytes of
// sha256("seed|ref|round|name") over 2^64, as Python computes it.
func FlakyDraw(seed, ref, round, name string) float64 {
	sum := sha256.Sum256([]byte(seed + "|" + ref + "|" + round + "|" + name))
	// Python's int / float rounds the integer to the nearest float64 first, as Go's
	// conversion does; the division by 2^64 is exact.
	return float64(binary.BigEndian.Uint64(sum[:8])) / math.Exp2(64)
}
