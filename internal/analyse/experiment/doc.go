// Package experiment answers "does the candidate fix make the crash go away": it runs the
// spec's reproducer as a full sweep against a baseline ref and candidate refs (on this machine
// or as one GitHub dispatch, through package refrun), counts trials and failures per ref,
// runner and test from the artifact folders, and applies a documented verdict rule built on
// exact statistics (package stats): fixed, improved, no change, worse, or inconclusive with
// the repetitions still needed. With --until-decided it sweeps in rounds, a group-sequential
// design whose per-look level keeps the chance of a wrong verdict at 1-confidence.
//
// The rule, its thresholds and examples of output are documented in docs/experiment.md.
package experiment
