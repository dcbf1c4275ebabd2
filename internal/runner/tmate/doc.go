// Package tmate implements the tmate gate, `debugflow-step gate`: it opens a
// tmate session on the CI runner, tells the user how to reach it and how to
// free the job, and keeps the job alive until the first end condition:
//
//   - a continue file exists (default /tmp/continue; /continue and
//     $GITHUB_WORKSPACE/continue are honoured too),
//   - the tmate session ended (socket gone or has-session fails),
//   - the timeout (counted by the gate itself from its start),
//   - the optional connect timeout while nobody has attached,
//   - SIGTERM or SIGINT.
//
// Whatever ends the gate, it kills the session and says which condition it
// was. By default only the public SSH keys of $GITHUB_ACTOR (fetched through
// the GitHub API) may attach.
//
// The gate can also be split in two steps: --detach opens the session,
// records it in tmate_state.json in the output directory and returns at once;
// a later --wait step picks the session up and waits with the same end
// conditions and the same deadline.
//
// Every external program (tmate, apt-get, sudo) is reached through
// [CommandRunner]; the clock, the poll interval and the length of a minute are
// injectable so that tests run in fractions of a second.
package tmate
