package steps

// The sanitizer and the core dump pass run the failing tests again, once each. pytest-repeat
// is disabled for that (-p no:repeat), so a base id such as t.py::test_x[cuda] selects its
// test once whatever --count the project's configuration adds. A test with its own
// @pytest.mark.repeat(n) has no base id without pytest-repeat: only its repetition ids
// ("t.py::test_x[3-6]") exist, and only with the plugin on. Such a test is run by the id of a
// repetition that failed, with pytest-repeat on and --count 1 (which leaves every other id as
// it is).

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
