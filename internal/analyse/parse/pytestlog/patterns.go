package pytestlog

import (
	"github.com/debugflow/debugflow/internal/lazyre"
)

// The line shapes the parser recognises, as data. FORMATS.md section 3 is
// the grammar; each pattern names the variant it covers.
var (
	// CI timestamp prefixes: Jenkins "13:33:50  ", GitHub Actions
	// "2024-01-02T19:12:56.6287350Z ", timestamper "[2024-01-02T19:12:56.628Z] ".
	reCITimestamp = lazyre.New(`^\[?(?:\d{4}-\d{2}-\d{2}[T ])?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?(?:[ \t]+|$)`)

	// The tail of a non-xdist verbose line after the node id:
	// "PASSED   [ 50%]", "SKIPPED (reason)  [ 62%]", classic "PASSED",
	// "<- base.py PASSED" for inherited tests.
	reVerboseTail = lazyre.New(`^(?:<- \S+ )?([A-Z]+)(?: \(.*\))?(?:\s+\[[^\]]*\])?$`)

	// A verbose result whose node id was printed on an earlier line (test
	// output glued to the start line under -s): "PASSED    [ 50%]".
	reBareResult = lazyre.New(`^([A-Z]+)(?: \(.*\))?\s+\[\s*\d+(?:%|/\d+)\]$`)

	// Progress letters, optionally after the file path and before the
	// right-edge progress: "test_50.py FF   [100%]", "F....sssxxx.".
	// "f" is old pytest's failure outside the call phase (crash reports),
	// "R" is pytest-rerunfailures' and pytest-retry's failed attempt.
	reLetters = lazyre.New(`^(?:(\S+) )?([.FEsxXfR]+)(?:\s+\[[^\]]*\])?$`)

	// Collection header: "collected 10 items / 2 deselected / 8 selected",
	// "collecting ... collected 1 item".
	reCollected = lazyre.New(`\bcollected (\d+) items?((?: / \d+ [a-z]+)*)`)
	reSelected  = lazyre.New(`/ (\d+) selected`)
	reDeselHdr  = lazyre.New(`/ (\d+) deselected`)
	// xdist 3.x headers: "created: 8/8 workers", "8 workers [400 items]".
	reCreated      = lazyre.New(`^created: (\d+)/(\d+) workers?$`)
	reWorkersItems = lazyre.New(`^(\d+) workers? \[(\d+) items?\]$`)
	// One entry of the old xdist status line "gw0 [10] / gw1 C / gw3 ok".
	reStatusEntry = lazyre.New(`^gw\d+ (?:\[(\d+)\]|[A-Za-z]+)(?:\s*/\s*)?`)

	// Crash markers, matched anywhere in a line because xdist glues them
	// to progress output ("....[gw0] node down: Not properly terminated").
	reNodeDown     = lazyre.New(`\[(gw\d+)\] node down:[ \t]?(.*)$`)
	reWhileRunning = lazyre.New(`(?i)(?:worker|slave) u?['"](gw\d+)['"] crashed while running (?:u?'([^']*)'|u?"([^"]*)"|(u?['"].*))?`)
	reReplacing    = lazyre.New(`(?i)replacing crashed (?:worker|slave|node) (gw\d+)`)
	reMaxReached   = lazyre.New(`(?i)maximum crashed (?:workers|slaves) reached:?\s*(\d*)`)
	reNoRestart    = lazyre.New(`(?i)(?:worker|slave) (gw\d+) crashed and (?:worker|slave) restarting disabled`)

	// The worker record plugin's header line: where pytest's rootdir lies under its working
	// directory, as a Go/JSON string ("tests").
	reRootPrefix = lazyre.New(`^debugflow: rootdir is ("(?:[^"\\]|\\.)*") under the working directory$`)

	// Final line tail after the last " in ": "0.53s", "102.70s (0:01:42)",
	// pre-5.1 "6.48 seconds".
	reFinalTail = lazyre.New(`^(\d+(?:\.\d+)?)(?:s| seconds?)(?: \((\d+:\d{2}:\d{2}(?:\.\d+)?)\))?$`)
	// One comma-separated part of the final line: "2 failed", "1 warning",
	// plugin categories "3 rerun", "1 pytest-warnings".
	reFinalPart = lazyre.New(`^(\d+) ([a-z][a-z0-9_-]*(?: [a-z][a-z0-9_-]*)*)$`)

	// The location and reason of a folded SKIPPED summary line:
	// "[3] test_crash.py:16: nope".
	reSkippedEntry = lazyre.New(`^\[(\d+)\] (.*?): (.*)$`)
)
