package steps

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/debugflow/debugflow/internal/analyse/parse/pytestlog"
	"github.com/debugflow/debugflow/internal/analyse/parse/workerlog"
	"github.com/debugflow/debugflow/internal/readfile"
)

// The sanitizer and the core dump pass run the failing tests again, once each. pytest-repeat
// is disabled for that (-p no:repeat), so a base id such as t.py::test_x[cuda] selects its
// test once whatever --count the project's configuration adds. A test with its own
// @pytest.mark.repeat(n) has no base id without pytest-repeat: only its repetition ids
// ("t.py::test_x[3-6]") exist, and only with the plugin on. Such a test is run by the id of a
// repetition that failed, with pytest-repeat on and --count 1 (which leaves every other id as
// it is).

// readWorkerRecord parses the sweep's worker record in out (nil when it cannot be read).
func readWorkerRecord(out string) *workerlog.Log {
	f, _, err := readfile.Open(filepath.Join(out, WorkerLog))
	if err != nil {
		return nil
	}
	defer f.Close()
	log, err := workerlog.Parse(io.LimitReader(f, workerLogMax))
	if err != nil {
		return nil
	}
	return log
}

// sweepRepeatMarks are the marked tests of the sweep whose worker record is log: the
// record's (the plugin reads each test's mark: exact) and, under a --count of 2 or more, those
// the collection found that the record does not name (a record cut at its size bound, or a
// first worker that died before writing its lines). Without a record (nil, or the plugin wrote
// nothing) they are the collection's, collected.
func sweepRepeatMarks(log *workerlog.Log, count int, collected pytestlog.RepeatMarks) pytestlog.RepeatMarks {
	if log == nil || log.Sessions == 0 {
		return collected
	}
	marks := pytestlog.RepeatMarksOf(log.Repeats)
	if count < 2 {
		// Without --count the collection's ids cannot tell a mark from a parameter id
		// that ends in two numbers; the record can.
		return marks
	}
	named := underFolders(marks)
	for base, n := range collected {
		if !named[base] {
			if marks == nil {
				marks = pytestlog.RepeatMarks{}
			}
			marks[base] = n
		}
	}
	return marks
}

// placeFlakyRetried adds to failed the ids of the tests the flaky plugin retried. The worker
// record's held_failure lines name the test of each failed attempt whose report a retry plugin
// held back, whole, written by the worker before the attempt's teardown: for the flaky plugin,
// each attempt it ran again, which pytest never reports. They are exact for a name two tests
// share, and there for a worker that crashed, whose part of the plugin's report (gathered from
// each xdist worker as it ends) was lost. (pytest-rerunfailures' attempts have them too: failing
// ids already.) A name of the flaky plugin's report (the test's name alone, "test_x[cuda]", in
// names) that no held_failure line has, as in a record cut at its size bound, is placed on the
// one id the record started whose last "::" part is that name; a name two started tests share
// or none has is not placed: the run still reproduced (summarizeReproducer), but the sanitizer
// and the core dump pass cannot tell which test to run again.
func placeFlakyRetried(log *workerlog.Log, failed, names []string) []string {
	if log == nil {
		return failed
	}
	have := make(map[string]bool, len(failed))
	for _, id := range failed {
		have[id] = true
	}
	add := func(id string) {
		if !have[id] && len(failed) < pytestlog.MaxEntries {
			have[id] = true
			failed = append(failed, id)
		}
	}
	recorded := map[string]bool{} // names the held_failure lines have
	for _, h := range log.HeldFailures {
		add(h.NodeID)
		recorded[testName(h.NodeID)] = true
	}
	found := make(map[string]string, len(names)) // name -> its one id, "" once two ids have it
	for _, name := range names {
		if !recorded[name] {
			found[name] = "\x00" // not seen yet
		}
	}
	if len(found) == 0 {
		return failed
	}
	for _, w := range log.Workers {
		for _, t := range w.Tests {
			name := testName(t.NodeID)
			switch id, wanted := found[name]; {
			case !wanted || name == "" || id == t.NodeID:
			case id == "\x00":
				found[name] = t.NodeID
			default:
				found[name] = "" // two tests of that name
			}
		}
	}
	for _, name := range names {
		if id := found[name]; id != "" && id != "\x00" {
			add(id)
		}
	}
	return failed
}

// testName is a node id's last "::" part, the name the flaky plugin gives the test ("" for an
// id without one).
func testName(nodeid string) string {
	i := strings.LastIndex(nodeid, "::")
	if i < 0 {
		return ""
	}
	return nodeid[i+2:]
}

// underFolders are the ids of marks (the record's, relative to the working directory) and the
// same ids without each of their leading folders: the names the collection (relative to the
// rootdir, which may be a folder below) gives the same tests. A set, not a scan per id: a
// record may name 100,000 marked tests.
func underFolders(marks pytestlog.RepeatMarks) map[string]bool {
	names := make(map[string]bool, len(marks))
	for id := range marks {
		file, test, ok := strings.Cut(id, "::")
		names[id] = true
		for ok {
			var slash bool
			_, file, slash = strings.Cut(file, "/")
			if !slash {
				break
			}
			names[file+"::"+test] = true
		}
	}
	return names
}

// rerunIDs are the ids to give pytest for the failing base tests bases of rep, and whether
// pytest-repeat must stay on for them (a marked test among them). One pass over the failed
// ids: a sweep may have failed a hundred thousand of them.
func rerunIDs(rep *ReproducerResult, bases []string) (ids []string, withRepeat bool) {
	first := map[string]string{} // marked base -> its first failed repetition's id
	if len(rep.RepeatMarks) > 0 {
		for _, id := range rep.FailedTests {
			b, _, ok := rep.RepeatMarks.Split(id, rep.Count)
			if _, seen := first[b]; ok && !seen && rep.RepeatMarks.Runs(b, 0) > 0 {
				first[b] = id
			}
		}
	}
	ids = make([]string, len(bases))
	for i, base := range bases {
		ids[i] = base
		if id, ok := first[base]; ok {
			ids[i], withRepeat = id, true
		}
	}
	return ids, withRepeat
}

// repeatArgs are the pytest arguments that make each id of a rerun run once.
func repeatArgs(withRepeat bool) []string {
	if withRepeat {
		return []string{"--count", "1"}
	}
	return []string{"-p", "no:repeat"}
}
