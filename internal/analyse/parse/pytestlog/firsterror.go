package pytestlog

import "strings"

// ellipsis is what pytest appends to a short-summary message cut to the terminal width.
const ellipsis = "..."

// FirstError returns the first failed or errored test of the short summary that has a message,
// with that message whole: pytest cuts short-summary messages to the terminal width (80
// columns when not on a terminal) unless it runs on CI, so a message that ends in "..." is
// replaced by the first "E" line of the test's report in the FAILURES or ERRORS section, which
// pytest never cuts. Without a short summary it is the first report with an "E" line.
func (r Result) FirstError() (nodeID, message string) {
	for _, e := range r.ShortSummary {
		if !e.Outcome.isFailure() {
			continue
		}
		msg := e.Message
		if full := r.reportError(e.NodeID); full != "" && (msg == "" || isCutFrom(msg, full)) {
			msg = full
		}
		if msg != "" {
			return e.NodeID, msg
		}
	}
	if len(r.ShortSummary) == 0 {
		for _, f := range r.Failures {
			if f.Error != "" {
				return f.Head, f.Error
			}
		}
	}
	return "", ""
}

// isCutFrom reports whether msg is full cut by pytest: a prefix of it followed by "...".
func isCutFrom(msg, full string) bool {
	prefix, cut := strings.CutSuffix(msg, ellipsis)
	return cut && len(full) > len(prefix) && strings.HasPrefix(full, prefix)
}

// reportError is the "E" line of nodeID's report in the FAILURES or ERRORS section ("" when
// the log has none).
func (r Result) reportError(nodeID string) string {
	head := reportHead(nodeID)
	for _, f := range r.Failures {
		if f.Error == "" {
			continue
		}
		switch f.Head {
		case head, "ERROR at setup of " + head, "ERROR at teardown of " + head, "ERROR collecting " + nodeID:
			return f.Error
		}
	}
	return ""
}

// reportHead is the title pytest gives nodeID's report: the part after the module with "::"
// as ".", "TestK.test_y[1-2]" for "t.py::TestK::test_y[1-2]"; the id itself when it names a
// module.
func reportHead(nodeID string) string {
	_, inModule, ok := strings.Cut(nodeID, "::")
	if !ok {
		return nodeID
	}
	return strings.ReplaceAll(inModule, "::", ".")
}
