package steps

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/evidencefiles"
)

// WorkerLog is the worker record the reproducer writes into the artifact directory: one JSON
// line per pytest process start and per test start and finish (parse/workerlog reads it).
const WorkerLog = evidencefiles.WorkerLog

// workerLogModule is the plugin's module name, loaded with -p.
const workerLogModule = "debugflow_worker_log"

// workerLogMax bounds workers.jsonl (the plugin stops writing there).
const workerLogMax = workerlog.MaxFileBytes

//go:embed workerlog_plugin.py
var workerLogPlugin []byte

// workerLogSetup is what pytest needs to load the plugin (and, for the sweep, write the worker
// record): the plugin's arguments and environment, and the temporary folder holding the
// plugin, removed by cleanup.
type workerLogSetup struct {
	args    []string
	env     []string
	cleanup func()
}

// stageWorkerLog writes the plugin into a temporary folder and returns the -p argument and the
// environment that load it in every pytest process: PYTHONPATH with that folder first (before
// any PYTHONPATH of --env pairs or of the step's own environment, which stay), and the path and
// size bound of the record. The record file is emptied: it describes this run only.
func stageWorkerLog(env *Env, out string, extra []string) (workerLogSetup, error) {
	record := filepath.Join(out, WorkerLog)
	f, err := createEvidenceFile(record)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return workerLogSetup{cleanup: func() {}}, fmt.Errorf("create %s: %w", WorkerLog, err)
	}
	abs, err := filepath.Abs(record)
	if err != nil {
		abs = record
	}
	return stagePlugin(env, extra, abs)
}

// stagePytestPlugin stages the plugin without a record, for the sanitizer's and the core dump
// pass's pytest: it writes nothing (the sweep's workers.jsonl stays the reproducer's) and still
// raises a -q of the project's addopts back to -v's verbosity, so those logs name each test and
// have pytest's session rule and final line, which the sanitizer's verdict reads.
func stagePytestPlugin(env *Env, extra []string) (workerLogSetup, error) {
	return stagePlugin(env, extra, "")
}

// stagePlugin stages the plugin with record as $DEBUGFLOW_WORKER_LOG ("" set empty: no record,
// whatever the step's environment says).
func stagePlugin(env *Env, extra []string, record string) (workerLogSetup, error) {
	none := workerLogSetup{cleanup: func() {}}
	dir, err := os.MkdirTemp("", "debugflow-plugin-")
	if err != nil {
		return none, fmt.Errorf("stage the worker record plugin: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := os.WriteFile(filepath.Join(dir, workerLogModule+".py"), workerLogPlugin, 0o644); err != nil {
		cleanup()
		return none, fmt.Errorf("stage the worker record plugin: %w", err)
	}
	pythonPath := env.Getenv("PYTHONPATH")
	for _, kv := range extra {
		if v, ok := strings.CutPrefix(kv, "PYTHONPATH="); ok {
			pythonPath = v
		}
	}
	if pythonPath != "" {
		pythonPath = dir + string(os.PathListSeparator) + pythonPath
	} else {
		pythonPath = dir
	}
	return workerLogSetup{
		args: []string{"-p", workerLogModule},
		env: []string{
			"PYTHONPATH=" + pythonPath,
			"DEBUGFLOW_WORKER_LOG=" + record,
			"DEBUGFLOW_WORKER_LOG_MAX=" + strconv.Itoa(workerLogMax),
		},
		cleanup: cleanup,
	}, nil
}
