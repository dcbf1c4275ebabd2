package audit

import (
	"strings"
	"testing"
	"time"
)

// TestHostileYAMLIsRefusedQuickly: the audit reads anyone's workflow. 90 KB of nested brackets
// took the YAML parser a minute and 3 GB; a broken line of 600 KB was quoted whole in the error
// (and formatting it took minutes). Both are refused at once, with a short message.
func TestHostileYAMLIsRefusedQuickly(t *testing.T) {
	steps := strings.Repeat("{run: *a},", 60000)
	for _, tt := range []struct {
		name, content, want string
	}{
		{"flow nesting", "on: push\njobs: " + strings.Repeat("[", 45000) + strings.Repeat("]", 45000) + "\n", "nest deeper than 64 levels"},
		{"block nesting", "on: push\njobs:\n" + strings.Repeat("- ", 20000) + "x\n", "nest deeper than 64 levels"},
		{"mapping nesting", "on: push\njobs: " + strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000) + "\n", "nest deeper than 64 levels"},
		{"huge broken line", "on: push\nx: &a \"" + strings.Repeat("x", 1000) + "\"\njobs:\n  j:\n    steps: [" + steps + "]\n", "parse YAML"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Workflow("w.yml", []byte(tt.content))
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %.300v, want it to say %q", err, tt.want)
			}
			if len(err.Error()) > 500 {
				t.Errorf("the error is %d bytes long: %.300s", len(err.Error()), err)
			}
		})
	}
}

// TestDeepButRealWorkflowAudits: a matrix of nested include entries, well within the bound.
func TestDeepButRealWorkflowAudits(t *testing.T) {
	src := "on: push\npermissions: {contents: read}\njobs:\n  j:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n" +
		"    strategy:\n      matrix:\n        include:\n          - cfg: {a: {b: {c: [[1, [2, {d: [3]}]]]}}}\n    steps:\n      - run: echo\n"
	if _, err := Workflow("w.yml", []byte(src)); err != nil {
		t.Fatal(err)
	}
}

// TestAliasBombIsRefused: 600 bytes of nested aliases expand to a billion values; walked
// through a matrix they took 30 s and 2 GB. The expansion is measured first and refused.
func TestAliasBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("on: push\nenv:\n  A0: &a0 [\"${{ github.event.issue.title }}\",x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i <= 8; i++ {
		b.WriteString("  A" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.TrimSuffix(strings.Repeat("*a"+string(rune('0'+i-1))+",", 10), ",") + "]\n")
	}
	b.WriteString("jobs:\n  j:\n    runs-on: ${{ matrix.x }}\n    strategy:\n      matrix: {x: *a8}\n    steps:\n      - run: echo ${{ matrix.x }}\n")
	start := time.Now()
	_, err := Workflow("w.yml", []byte(b.String()))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "aliases expand to more than") {
		t.Fatalf("err = %v, want the alias expansion refused", err)
	}
}

// TestLargeWorkflowWithoutAliasesAudits: a 3.8 MB generated workflow with 300,000 values and
// no alias was refused as an alias bomb; the bound is on what aliases add, not on the file.
func TestLargeWorkflowWithoutAliasesAudits(t *testing.T) {
	var b strings.Builder
	b.WriteString("on: push\npermissions: {contents: read}\njobs:\n  j:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n    steps:\n")
	for i := 0; b.Len() < 3_800_000; i++ {
		b.WriteString("      - run: echo step with some text to make it long\n        env: {A: a, B: b, C: c, D: d, E: e, F: f, G: g, H: h}\n")
	}
	b.WriteString("      - run: echo ${{ github.event.issue.title }}\n")
	start := time.Now()
	findings, err := Workflow("big.yml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Rule != "expression-injection" {
		t.Errorf("findings = %v, want the one injection at the end", findings)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestHugeMatrixExcludeIsBounded: a matrix of many axes and thousands of exclude: entries (made
// with aliases) is not expanded combination by combination.
func TestHugeMatrixExcludeIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("on: pull_request\npermissions: {contents: read}\nx: &ex\n")
	for i := 0; i < 5000; i++ {
		b.WriteString("  - {os: gpu-box, a: v" + strings.Repeat("x", i%7) + "}\n")
	}
	b.WriteString("jobs:\n  j:\n    runs-on: ${{ matrix.os }}\n    timeout-minutes: 5\n    strategy:\n      matrix:\n")
	b.WriteString("        os: [ubuntu-latest, gpu-box]\n        a: [v, vx, vxx, vxxx, vxxxx, vxxxxx, vxxxxxx]\n        b: [1, 2, 3, 4, 5, 6, 7, 8]\n        c: [1, 2, 3, 4, 5, 6, 7, 8]\n        d: [1, 2, 3, 4, 5, 6, 7, 8]\n        exclude: *ex\n")
	b.WriteString("    steps:\n      - run: echo\n")
	start := time.Now()
	findings, err := Workflow("w.yml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if len(findings) != 1 || findings[0].Rule != "self-hosted-runner" {
		t.Errorf("findings = %v, want the self-hosted runner the bound keeps", findings)
	}
}
