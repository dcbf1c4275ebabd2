package steps

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/limits"
	"strconv"
	"strings"
)

// CheckInputsOptions configures `debugflow-step check-inputs`: the workflow inputs that the
// later steps parse, checked right after the step binary is installed, so a bad value fails
// the run in seconds instead of after the build.
type CheckInputsOptions struct {
	// Count is the repeat count as the workflow input gave it; CountInput names that input.
	Count      string `flag:"count" usage:"the repeat count (a whole number from 1 to 100000)"`
	CountInput string `flag:"count-input" usage:"the workflow input the count comes from, for messages"`
	// TmateTimeout is the gate timeout in minutes; TmateTimeoutInput names its input.
	TmateTimeout      string `flag:"tmate-timeout-minutes" usage:"the tmate timeout (1..360 minutes)"`
	TmateTimeoutInput string `flag:"tmate-timeout-input" usage:"the workflow input the timeout comes from, for messages"`
	// TmateMaxMinutes is the longest timeout the workflow allows (its tmate.max_minutes, which
	// fits in the job timeout); 0 means the gate's own limit.
	TmateMaxMinutes int `flag:"tmate-max-minutes" default:"360" usage:"the longest tmate timeout the workflow allows (its job timeout leaves room for)"`
}

// RunCheckInputs is `debugflow-step check-inputs`. Every problem is reported at once (exit 2).
func RunCheckInputs(env *Env, opts CheckInputsOptions) error {
	var problems, ok []string
	name := func(input, flag string) string {
		if input != "" {
			return "workflow input " + input
		}
		return flag
	}
	if opts.Count != "" || opts.CountInput != "" {
		who := name(opts.CountInput, "--count")
		// The stage and the reproducer read the count as a Go int flag, which refuses blanks
		// and reads "010" as 8 (octal): only plain digits mean the same to both.
		if n, err := strconv.Atoi(opts.Count); err != nil || strconv.Itoa(n) != opts.Count || n < 1 || n > limits.MaxRepeatCount {
			problems = append(problems, fmt.Sprintf("%s is the pytest-repeat count: want a whole number from 1 to %d, digits only (pytest-repeat collects that many copies of every test before the first runs), got %q", who, limits.MaxRepeatCount, opts.Count))
		} else {
			ok = append(ok, fmt.Sprintf("%s=%d", who, n))
		}
	}
	if opts.TmateTimeout != "" || opts.TmateTimeoutInput != "" {
		who := name(opts.TmateTimeoutInput, "--tmate-timeout-minutes")
		maxMinutes := opts.TmateMaxMinutes
		if maxMinutes <= 0 || maxMinutes > MaxTmateTimeoutMinutes {
			maxMinutes = MaxTmateTimeoutMinutes
		}
		if n, err := ParseTmateTimeoutMax(opts.TmateTimeout, maxMinutes); err != nil {
			problems = append(problems, fmt.Sprintf("%s is the tmate timeout: want a whole number of minutes from %d to %d, got %q",
				who, MinTmateTimeoutMinutes, maxMinutes, opts.TmateTimeout))
		} else {
			ok = append(ok, fmt.Sprintf("%s=%d", who, n))
		}
	}
	if len(problems) > 0 {
		for _, p := range problems {
			env.errorf("bad workflow input", "%s", p)
		}
		return usagef("%s (dispatch again with a valid value)", strings.Join(problems, "; "))
	}
	if len(ok) == 0 {
		return usagef("nothing to check: give --count and/or --tmate-timeout-minutes")
	}
	fmt.Fprintf(env.Stdout, "inputs OK: %s\n", strings.Join(ok, ", "))
	return nil
}
