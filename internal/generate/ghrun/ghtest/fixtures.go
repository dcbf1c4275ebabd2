package ghtest

import (
	"context"
	"sync"
	"time"
)

// Token looks like a real token so a leak would be easy to spot.
const Token = "ghp_TESTtoken0123456789SECRETvalue"

// WorkflowFile is the debug workflow's file.
const WorkflowFile = "debug_cuda_repro.yml"

// FixedNow is the tests' clock.
var FixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Sleeper records waits instead of sleeping, and honours cancellation.
type Sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return nil
}

// Waits are the waits so far.
func (s *Sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}
