package testenv

import "flag"

// FuzzMinimizeBudget is the fuzzer's minimization budget for each new input, in executions,
// that MinimizeBriefly sets. Go's default is a minute per input, during which no execution is
// counted and nothing new is explored: with targets that cost milliseconds an input once
// instrumented, and a new input every few executions, a 15-second run on 2 cores spent itself
// minimizing (FuzzEvidence: 8 inputs run in 15 s; with 50 executions per minimization, 6,572).
const FuzzMinimizeBudget = "50x"

// MinimizeBriefly sets -test.fuzzminimizetime to FuzzMinimizeBudget unless the command line
// set it. A package's TestMain calls it before m.Run.
func MinimizeBriefly() {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		flag.Set("test.fuzzminimizetime", FuzzMinimizeBudget)
	}
}

// FuzzWorker reports whether this process is a fuzzing worker, which runs only the fuzz
// target: a TestMain skips the setup other tests need (building a test double).
func FuzzWorker() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}
