package workflow

// representative exercises every field of the model: both triggers, every input type,
// permissions, concurrency, env, a matrix job and a report job with needs/if, uses steps
// with pinned refs and comments, run steps with shell, multi-line scripts, step env,
// continue-on-error and both kinds of timeout.
func representative() *Workflow {
	return &Workflow{
		Name:    "Debug CUDA repro",
		RunName: Concat(Text("Debug CUDA repro "), Input("dispatch_id")),
		On: On{
			PullRequest: &PullRequest{Types: []string{"opened", "reopened", "synchronize"}},
			WorkflowDispatch: &WorkflowDispatch{Inputs: Inputs{
				{Name: "quadrants_ref", Description: "Ref of the project to test", Type: InputString, Default: Str("efd3f69a2b")},
				{Name: "reproduce_count", Description: "pytest --count", Type: InputNumber, Default: Int(50)},
				{Name: "sanitize", Description: "Run compute-sanitizer", Type: InputBoolean, Default: Bool(false)},
				{Name: "tool", Description: "Sanitizer tool", Required: true, Type: InputChoice, Default: Str("memcheck"), Options: []string{"memcheck", "racecheck", "on"}},
				{Name: "dispatch_id", Description: "Set by debugflow dispatch to find this run", Type: InputString},
			}},
		},
		Permissions: ContentsRead(),
		Concurrency: &Concurrency{Group: Concat(Github("workflow"), Text("-"), Github("run_id"))},
		Env: Env{
			{Name: "PYTHONUNBUFFERED", Value: "1"},
			{Name: "QUADRANTS_OFFLINE", Value: "true"},
			{Name: "DEBUG_REF", Value: Default(Input("quadrants_ref"), "efd3f69a2b").String()},
		},
		Jobs: Jobs{
			{
				ID:             "debug",
				Name:           Concat(Text("debug ("), Matrix("runner"), Text(")")),
				RunsOn:         RunsOn{Matrix("runner").String()},
				TimeoutMinutes: Minutes{N: 120},
				Permissions:    ContentsRead(),
				Strategy:       &Strategy{Matrix: MatrixAxes{{Name: "runner", Values: []Value{Str("gpu-t4-4-core"), Str("gpu-a10-8-core")}}}},
				Env:            Env{{Name: "REPRO_DIR", Value: "/tmp/repro"}},
				Steps: []Step{
					{
						Name: "Check out",
						Uses: Uses{Action: "actions/checkout", Ref: "11bd71901bbe5b1630ceea73d27597364c9af683", Comment: "v4.2.2"},
						With: With{
							{Key: "ref", Value: Str(Default(Input("quadrants_ref"), "efd3f69a2b").String())},
							{Key: "submodules", Value: Str("recursive")},
							{Key: "fetch-depth", Value: Int(1)},
							{Key: "persist-credentials", Value: Bool(false)},
						},
					},
					{
						Name: "Set up Python",
						Uses: Uses{Action: "actions/setup-python", Ref: "a26af69be951a213d495a4c3e4e4022e16d87065", Comment: "v5.6.0"},
						With: With{{Key: "python-version", Value: Str("3.10")}},
					},
					{
						Name:  "Build",
						Env:   Env{{Name: "QUADRANTS_CMAKE_ARGS", Value: "-DQD_WITH_CUDA=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo"}},
						Shell: "bash",
						Run:   "python -m pip install -r requirements.txt\npip install -e . --no-build-isolation\n",
					},
					{
						Name: "Stage helper scripts",
						ID:   "stage",
						Env:  Env{{Name: "TMATE_TIMEOUT_MINUTES", Value: Default(Input("tmate_timeout_minutes"), "60").String()}},
						Run:  `debugflow-step stage --out /tmp/repro --tmate-timeout-minutes "$TMATE_TIMEOUT_MINUTES"`,
					},
					{
						Name:            "Sanitizer",
						If:              Eq(StepOutput("reproduce", "reproduced"), Lit("true")),
						Run:             "debugflow-step sanitize --out /tmp/repro",
						ContinueOnError: true,
						TimeoutMinutes:  Minutes{N: 30},
					},
					{
						Name:           "tmate gate",
						If:             Always(),
						Run:            `debugflow-step gate --out /tmp/repro --timeout-minutes "$TMATE_TIMEOUT_MINUTES"`,
						TimeoutMinutes: Minutes{Expr: FromJSON(Default(StepOutput("stage", "gate_timeout_minutes"), "65"))},
					},
					{
						Name: "Upload artifacts",
						If:   Always(),
						Uses: Uses{Action: "actions/upload-artifact", Ref: "ea165f8d65b6e75b540449e92b4886f43607fa02", Comment: "v4.6.2"},
						With: With{
							{Key: "name", Value: Str(Concat(Text("debug_cuda_repro_artifacts-"), Matrix("runner")))},
							{Key: "path", Value: Str("/tmp/repro")},
							{Key: "overwrite", Value: Bool(true)},
						},
					},
				},
			},
			{
				ID:             "report",
				Name:           "Cross-runner report",
				Needs:          Needs{"debug"},
				If:             Always(),
				RunsOn:         RunsOn{"ubuntu-latest"},
				TimeoutMinutes: Minutes{N: 15},
				Permissions:    ContentsRead(),
				Steps: []Step{
					{Name: "Local action", Uses: Uses{Action: "./.github/actions/report"}},
					{Name: "Report", Run: "debugflow report --compare --markdown artifacts/* >> \"$GITHUB_STEP_SUMMARY\""},
				},
			},
			{
				ID:             "labels",
				Needs:          Needs{"debug", "report"},
				If:             Not(Cancelled()),
				RunsOn:         RunsOn{"self-hosted", "linux", "gpu"},
				TimeoutMinutes: Minutes{N: 5},
				Steps:          []Step{{Run: "nvidia-smi", Shell: "sh"}},
			},
		},
	}
}
