package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
)

// TestCrashSentenceAgainstChance: "N of M crashes hit a worker's first or second test" means
// something only against how many test runs were a worker's first or second. When every
// worker ran one or two tests, every crash is "early" by construction: the sentence says so
// instead of suggesting crashes favour a worker's first tests.
func TestCrashSentenceAgainstChance(t *testing.T) {
	tests := []struct {
		name string
		// ran is each worker's number of tests; crashAt the position it crashed at (0: none).
		ran, crashAt []int
		want         string
		notWant      string
	}{
		{
			name: "every worker ran one or two tests",
			ran:  []int{2, 1, 2, 1, 2, 2}, crashAt: []int{2, 1, 2, 1, 0, 0},
			want:    "4 of 4 crashes hit a worker's first or second test, but so were 10 of 10 test runs (100%): chance alone could explain it",
			notWant: "which only",
		},
		{
			name: "long-lived workers",
			ran:  []int{1, 2, 1, 30, 50, 50, 50, 50}, crashAt: []int{1, 2, 1, 30, 0, 0, 0, 0},
			want:    "3 of 4 crashes hit a worker's first or second test, which only 14 of 234 test runs were (6%)",
			notWant: "chance",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec strings.Builder
			var crashes [][2]string
			clock := 1796208400.0
			line := func(w string, pid int, phase, id string) {
				clock += 0.01
				fmt.Fprintf(&rec, `{"worker":%q,"pid":%d,"phase":%q,"time":%.3f,"mono":%.3f,"nodeid":%q,"tz_offset":0}`+"\n",
					w, pid, phase, clock, clock-1796208000, id)
			}
			for i := range tt.ran {
				line(fmt.Sprintf("gw%d", i), 1000+i, "session", "")
			}
			for i, n := range tt.ran {
				w := fmt.Sprintf("gw%d", i)
				for k := 1; k <= n; k++ {
					id := fmt.Sprintf("t.py::test_%d_%d", i, k)
					line(w, 1000+i, "start", id)
					if k == tt.crashAt[i] {
						crashes = append(crashes, [2]string{w, id})
						break
					}
					line(w, 1000+i, "finish", id)
				}
			}
			log, err := workerlog.Parse(strings.NewReader(rec.String()))
			if err != nil {
				t.Fatal(err)
			}
			got := buildTimeline(log, crashes, len(tt.ran), map[string]bool{}).Summary
			if !strings.Contains(got, tt.want) || strings.Contains(got, tt.notWant) {
				t.Errorf("summary %q\nwant %q, without %q", got, tt.want, tt.notWant)
			}
		})
	}
}
