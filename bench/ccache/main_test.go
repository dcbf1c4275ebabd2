package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// TestOneRound builds a project once plain, cold and warm: the cold build misses every unit,
// the warm one hits every unit and takes a fraction of the cold one's CPU time. It builds the
// tests' light project (testenv.CXXProject, five units like the benchmark's): what is tested
// is the program, and the benchmark's own project costs four times the compiler time.
func TestOneRound(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-project", testenv.CXXProject(t), "-rounds", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	row := regexp.MustCompile(`(?m)^\| 1 \| [0-9.]+ s / [0-9.]+ s \| [0-9.]+ s / [0-9.]+ s \((\d+)\) \| [0-9.]+ s / [0-9.]+ s \((\d+)\) \|$`).FindStringSubmatch(text)
	if row == nil || row[1] != "5" || row[2] != "5" {
		t.Fatalf("want a row with 5 misses cold and 5 hits warm:\n%s", text)
	}
	m := regexp.MustCompile(`cold/warm: ([0-9.]+)x wall, ([0-9.]+)x CPU`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no ratio line:\n%s", text)
	}
	if cpu, _ := strconv.ParseFloat(m[2], 64); cpu < 2 {
		t.Errorf("warm CPU is not under half the cold CPU (%sx):\n%s", m[2], text)
	}
	if !strings.HasPrefix(text, "| round |") {
		t.Errorf("no table header:\n%s", text)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-rounds", "0"}, {"-j", "0"}, {"-nope"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
