package audit

import "testing"

func TestMayRun(t *testing.T) {
	forkPR := scenario{Event: "pull_request", Fork: true}
	samePR := scenario{Event: "pull_request", Fork: false}
	dispatch := scenario{Event: "workflow_dispatch"}
	target := scenario{Event: "pull_request_target", Fork: true}
	const guard = "github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository"
	tests := []struct {
		cond string
		sc   scenario
		want bool
	}{
		{"", forkPR, true},
		{"always()", forkPR, true},
		{"success()", forkPR, true},
		{guard, forkPR, false},
		{guard, samePR, true},
		{guard, dispatch, true},
		{guard, target, true}, // the guard names pull_request, not pull_request_target
		{"${{ " + guard + " }}", forkPR, false},
		{"${{ github.event.pull_request.head.repo.full_name == github.repository }}", forkPR, false},
		{"github.repository == github.event.pull_request.head.repo.full_name", forkPR, false},
		{"github.event.pull_request.head.repo.full_name == github.repository", dispatch, false},
		{"!github.event.pull_request.head.repo.fork", forkPR, false},
		{"!github.event.pull_request.head.repo.fork", samePR, true},
		{"github.event.pull_request.head.repo.fork == false", forkPR, false},
		{"github.event.pull_request.head.repo.fork != true && always()", forkPR, false},
		{"github.event_name == 'workflow_dispatch'", forkPR, false},
		{"github.event_name == 'WORKFLOW_DISPATCH'", dispatch, true}, // strings ignore case
		{"github.event_name != 'pull_request'", forkPR, false},
		{"github.event_name != 'pull_request'", target, true},
		{"contains(github.event_name, 'dispatch')", forkPR, false},
		{"startsWith(github.event_name, 'pull_request')", target, true},
		{"github.event_name == 'push' || contains(github.event.pull_request.labels.*.name, 'safe')", forkPR, true},
		{"github.event_name == 'push' && contains(github.event.pull_request.labels.*.name, 'safe')", forkPR, false},
		{"(github.event_name == 'push')", forkPR, false},
		{"github.event_name == 'push' || failure()", forkPR, true},
		{"github.event.pull_request.head.repo.full_name == 'owner/repo'", forkPR, true}, // unknown
		{"github.actor == 'dependabot[bot]'", forkPR, true},
		{"false", forkPR, false},
		{"0", forkPR, false},
		{"''", forkPR, false},
		{"null", forkPR, false},
		{"'false'", forkPR, true},                        // a non-empty string
		{"${{ false }} && ${{ false }}", forkPR, true},   // text around expressions: a string
		{"github.event_name == 'push' &&", forkPR, true}, // syntax error: may run
		{"github[github.x] == 'a' && false", forkPR, false},
		{"fromJSON('{}').a == 'x' || github.event_name == 'pull_request'", forkPR, true},
		{"1 < 2 && github.event_name == 'push'", forkPR, false},
		{"github . event_name == 'push'", forkPR, false},
		{"github['event_name'] == 'push'", forkPR, false},
	}
	for _, tt := range tests {
		if got := mayRun(tt.cond, tt.sc); got != tt.want {
			t.Errorf("mayRun(%q, %+v) = %v, want %v", tt.cond, tt.sc, got, tt.want)
		}
	}
}

func FuzzMayRun(f *testing.F) {
	f.Add("github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository")
	f.Add("!(a.b[c['d']] && fromJSON('x').y) || contains(a, 'b')")
	f.Add("((((((1))))))")
	f.Fuzz(func(t *testing.T, cond string) {
		mayRun(cond, scenario{Event: "pull_request", Fork: true}) // must not panic or hang
	})
}
