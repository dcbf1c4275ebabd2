// Package stepspec is the one place where a spec becomes the options of debugflow-step's
// verbs. The generator writes these options as the steps' command lines (package stepflag),
// and `debugflow local` and the experiment's local runs call the verbs with them, so a spec
// field reaches a verb the same way on a runner and on this machine.
//
// Each function starts from the verb's defaults (what an empty command line gives, from the
// struct tags) and sets what the spec says, so the generator writes only what differs from
// them. Out stays the default: the workflow passes the job's evidence folder
// ("$DEBUGFLOW_OUT"), a local run its own folder.
package stepspec

import (
	"github.com/debugflow/debugflow/internal/runner/tmate"
	"strconv"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/steps"
	"github.com/debugflow/debugflow/steps/stepflag"
)

// Count is the repeat count of a run that gets no inputs: the count input's default when
// the spec has one, else reproducer.count.
func Count(s *spec.Spec) int {
	if name := s.Reproducer.CountInput; name != "" {
		if in, ok := s.Input(name); ok && in.Default != "" {
			if n, err := strconv.Atoi(strings.TrimSpace(in.Default)); err == nil && n > 0 {
				return n
			}
			if f, err := strconv.ParseFloat(strings.TrimSpace(in.Default), 64); err == nil && f >= 1 && f == float64(int(f)) {
				return int(f)
			}
		}
	}
	return s.Reproducer.Count
}

// EnvPairs turns spec env entries into KEY=VALUE pairs, in order.
func EnvPairs(lists ...spec.Env) []string {
	var pairs []string
	for _, l := range lists {
		for _, v := range l {
			pairs = append(pairs, v.Name+"="+v.Value)
		}
	}
	return pairs
}

// Reproducer is the reproducer's flags shared by stage and reproduce.
func Reproducer(s *spec.Spec) steps.ReproducerFlags {
	r := s.Reproducer
	o := stepflag.Defaults[steps.ReproducerFlags]()
	o.Python, o.Workers, o.Count, o.Select = r.Python, r.Workers, Count(s), r.Select
	o.PytestArgs, o.Env, o.Paths = r.PytestArgs, EnvPairs(r.Env), r.Paths
	return o
}

// Reproduce is `debugflow-step reproduce`.
func Reproduce(s *spec.Spec) steps.ReproduceOptions {
	o := stepflag.Defaults[steps.ReproduceOptions]()
	o.ReproducerFlags, o.StopOnFirstFailure = Reproducer(s), s.Reproducer.StopOnFirstFailure
	return o
}

// Sanitizer is the sanitizer's flags shared by stage and sanitize.
func Sanitizer(s *spec.Spec) steps.SanitizerFlags {
	z := s.Sanitizer
	o := stepflag.Defaults[steps.SanitizerFlags]()
	o.Tool, o.Tools, o.LeakCheck = z.Tool, z.Tools, z.LeakCheck
	o.PrintLimit, o.MaxTests, o.SanitizerArgs = z.PrintLimit, z.MaxTests, z.Args
	return o
}

// Sanitize is `debugflow-step sanitize`. The selection (paths, -k) is given only with when:
// always, the only case that reads it. The failing tests run with the reproducer's pytest
// arguments and environment, as in the sweep and the core dump pass: a test that needs them to
// fail would otherwise pass under the sanitizer and read as clean.
func Sanitize(s *spec.Spec) steps.SanitizeOptions {
	o := stepflag.Defaults[steps.SanitizeOptions]()
	o.SanitizerFlags, o.Python, o.When = Sanitizer(s), s.Reproducer.Python, s.Sanitizer.When
	o.PytestArgs, o.Env = s.Reproducer.PytestArgs, EnvPairs(s.Reproducer.Env)
	if o.When == steps.WhenAlways {
		o.Paths, o.Select = s.Reproducer.Paths, s.Reproducer.Select
	}
	return o
}

// CoredumpAttemptTimeout bounds each attempt of the core dump pass: the step's minutes less
// one (left for cuda-gdb and the summary), shared equally by the attempts, at least one
// minute. Attempts below 1 count as 1 (the spec refuses them; the rule does not divide by 0).
func CoredumpAttemptTimeout(d spec.Coredump) time.Duration {
	return time.Duration(max(1, (d.TimeoutMinutes-1)/max(1, d.Attempts))) * time.Minute
}

// Coredump is `debugflow-step coredump`.
func Coredump(s *spec.Spec) steps.CoredumpOptions {
	d := s.Coredump
	o := stepflag.Defaults[steps.CoredumpOptions]()
	o.Python, o.Attempts, o.Timeout, o.MaxSizeMB = s.Reproducer.Python, d.Attempts, CoredumpAttemptTimeout(d), d.MaxSizeMB
	o.PytestArgs, o.Env = s.Reproducer.PytestArgs, EnvPairs(s.Reproducer.Env)
	return o
}

// Identity is `debugflow-step identity` (the first snapshot; the toolchain record adds
// AfterBuild and the caches).
func Identity(s *spec.Spec) steps.IdentityOptions {
	o := stepflag.Defaults[steps.IdentityOptions]()
	o.Python = s.Reproducer.Python
	return o
}

// Health is `debugflow-step health` at the end of the job: "after", compared with identity's
// "before".
func Health() steps.HealthOptions {
	o := stepflag.Defaults[steps.HealthOptions]()
	o.Name, o.Since = steps.HealthAfter, steps.HealthBefore
	return o
}

// Init is `debugflow-step init`: artifact.dir becomes a link to the job's folder.
func Init(s *spec.Spec) steps.InitOptions {
	o := stepflag.Defaults[steps.InitOptions]()
	o.Link = s.Artifact.Dir
	return o
}

// Smoke is `debugflow-step smoke` (empty when the spec has no smoke test).
func Smoke(s *spec.Spec) steps.SmokeOptions {
	o := stepflag.Defaults[steps.SmokeOptions]()
	if s.Smoke.SmokeEnabled() {
		o.Log, o.Command = s.Smoke.Log, s.Smoke.Command
	}
	return o
}

// Summary is `debugflow-step summary`.
func Summary(s *spec.Spec) steps.SummaryOptions {
	o := stepflag.Defaults[steps.SummaryOptions]()
	o.Artifact = s.Artifact.Name
	return o
}

// CheckInputs is `debugflow-step check-inputs` of a run without inputs: the values are the
// inputs' defaults (the workflow passes the inputs themselves).
func CheckInputs(s *spec.Spec) steps.CheckInputsOptions {
	o := stepflag.Defaults[steps.CheckInputsOptions]()
	if name := s.Reproducer.CountInput; name != "" {
		o.Count, o.CountInput = strconv.Itoa(Count(s)), name
	}
	if name := s.Tmate.TimeoutInput; name != "" && s.Tmate.GateEnabled() {
		o.TmateTimeout, o.TmateTimeoutInput = strconv.Itoa(s.Tmate.TimeoutMinutes), name
		o.TmateMaxMinutes = s.Tmate.MaxMinutes
	}
	return o
}

// Exports are the variables the staged files set: the workflow env, the exported variables,
// and PATH (the runner puts $GITHUB_PATH additions and the set-up actions there).
func Exports(s *spec.Spec) []string {
	var names []string
	for _, e := range s.Env {
		names = append(names, e.Name)
	}
	for _, e := range s.Exports() {
		names = append(names, e.Name)
	}
	return append(names, "PATH")
}

// Stage is `debugflow-step stage`.
func Stage(s *spec.Spec) steps.StageOptions {
	o := stepflag.Defaults[steps.StageOptions]()
	o.ReproducerFlags, o.StopOnFirstFailure, o.SanitizerFlags = Reproducer(s), s.Reproducer.StopOnFirstFailure, Sanitizer(s)
	o.RebuildDir, o.Artifact, o.Exports = s.Reproducer.RebuildDir, s.Artifact.Name, Exports(s)
	switch st := s.Reproducer.Standalone; {
	case st.File != "":
		o.StandaloneFile, o.StandaloneTest = st.File, st.Test
	case st.Script != "":
		o.StandaloneScript = st.Script
	case st.Code != "":
		o.StandaloneCode = st.Code
	}
	if t := s.Tmate; t.GateEnabled() {
		o.ContinueFiles = []string{t.ContinueFile}
		o.TmateTimeoutMinutes = strconv.Itoa(t.TimeoutMinutes)
		o.TmateMaxMinutes = t.MaxMinutes
	}
	if len(s.Build.Iterate) > 0 {
		o.Iterate = s.Build.Iterate
	}
	if s.Smoke.SmokeEnabled() {
		o.SmokeCommand, o.SmokeLog = s.Smoke.Command, s.Smoke.Log
	}
	return o
}

// Gate is `debugflow-step gate` (the tmate session) without --detach or --wait, which say
// where the step stands in the job.
func Gate(s *spec.Spec) tmate.Options {
	t := s.Tmate
	o := stepflag.Defaults[tmate.Options]()
	o.TimeoutMinutes = strconv.Itoa(t.TimeoutMinutes)
	o.ContinueFiles = []string{t.ContinueFile}
	if t.ConnectTimeoutMinutes > 0 {
		o.ConnectTimeoutMinutes = strconv.Itoa(t.ConnectTimeoutMinutes)
	}
	o.LimitActor = t.LimitsToActor()
	if srv := t.Server; srv != nil {
		o.ServerHost, o.ServerPort = srv.Host, srv.Port
		o.ServerRSAFingerprint, o.ServerED25519Fingerprint = srv.RSAFingerprint, srv.ED25519Fingerprint
	}
	return o
}
