// Package templates holds the files `debugflow-step stage` renders into the artifact
// directory: run_reproducer.sh and run_sanitizer.sh (rerun the workflow's steps with the same
// flags inside the tmate session), repro_standalone.py (one test in a loop, for py-spy) and
// README.md (the cheat sheet for the session).
//
// The files are text/template sources embedded with embed.FS. Rendering is deterministic: the
// same StageParams always give the same bytes, so golden files can pin them.
package templates
