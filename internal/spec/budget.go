package spec

// The job's time budget: validation adds up the steps' timeout-minutes and the longest tmate
// session a run may ask for, and rejects a spec whose sum does not fit in timeout_minutes.
const (
	// FixedStepsMinutes covers the steps without a timeout of their own: check-out, set-up,
	// the step binary, the input check, the identity, staging, the health snapshot after the
	// run, the Xid and job summaries and the uploads.
	FixedStepsMinutes = 10
	// GateMarginMinutes is what the blocking gate step's timeout-minutes adds to the tmate
	// timeout (the gate ends itself at the timeout; GitHub's limit is the backstop).
	GateMarginMinutes = 5
	// DetachMinutes bounds the step that opens the session before the reproducer
	// (tmate.placement: before).
	DetachMinutes = 10
	// CacheStepsMinutes covers the cache restores and saves (docs/cache.md): each has this
	// timeout-minutes and may fail without failing the job.
	CacheStepsMinutes = 5
	// DefaultConnectMinutes is tmate.connect_timeout_minutes when the spec does not set it:
	// the session ends, and frees the GPU runner, when nobody attached within 10 minutes (the
	// reference workflow's wait).
	DefaultConnectMinutes = 10
)

// BudgetItem is one line of the time budget: a number of minutes and the spec key that sets it.
type BudgetItem struct {
	Key     string
	Minutes int
}

// StepBudget lists what the job's steps other than the tmate gate may take, in job order.
func (s *Spec) StepBudget() []BudgetItem {
	items := []BudgetItem{{"(check-out, set-up, staging, summaries, uploads)", FixedStepsMinutes}}
	if len(s.Install.Apt) > 0 || len(s.Install.Commands) > 0 || len(s.Install.Exports) > 0 {
		items = append(items, BudgetItem{"install.timeout_minutes", s.Install.TimeoutMinutes})
	}
	if len(s.Build.Commands) > 0 || len(s.Build.Exports) > 0 {
		items = append(items, BudgetItem{"build.timeout_minutes", s.Build.TimeoutMinutes})
	}
	if s.Cache.CacheEnabled() {
		items = append(items, BudgetItem{"(cache restores and saves)", CacheStepsMinutes})
	}
	if s.Smoke.SmokeEnabled() {
		items = append(items, BudgetItem{"smoke.timeout_minutes", s.Smoke.TimeoutMinutes})
	}
	items = append(items, BudgetItem{"reproducer.timeout_minutes", s.Reproducer.TimeoutMinutes})
	if s.Sanitizer.SanitizerEnabled() {
		items = append(items, BudgetItem{"sanitizer.timeout_minutes", s.Sanitizer.TimeoutMinutes})
	}
	if s.Coredump.Enabled {
		items = append(items, BudgetItem{"coredump.timeout_minutes", s.Coredump.TimeoutMinutes})
	}
	if s.Tmate.GateEnabled() && s.Tmate.Placement == "before" {
		items = append(items, BudgetItem{"(opening the tmate session before the reproducer)", DetachMinutes})
	}
	return items
}

// StepMinutes is the sum of StepBudget.
func (s *Spec) StepMinutes() int {
	total := 0
	for _, it := range s.StepBudget() {
		total += it.Minutes
	}
	return total
}

// tmateRoomMinutes is the longest tmate session that fits in the job timeout after the steps.
func (s *Spec) tmateRoomMinutes() int {
	return s.TimeoutMinutes - s.StepMinutes() - GateMarginMinutes
}
