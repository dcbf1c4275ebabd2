package tmate

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/evidencefiles"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// StateFile is the name, in the output directory, of the record that --detach
// leaves for --wait (the blocking gate writes it too while it runs, so that an
// operator can find the socket).
const StateFile = evidencefiles.TmateState

// stateVersion changes when the state layout does; another version is stale.
const stateVersion = 1

// maxStateBytes bounds what loadState reads: the record is a few hundred bytes.
const maxStateBytes = 1 << 20

// state is an open tmate session as recorded in StateFile.
type state struct {
	Version int    `json:"version"`
	Tmate   string `json:"tmate"`
	Socket  string `json:"socket"`
	// Dir holds the socket, the authorized keys and the server config; it is
	// removed when the session ends.
	Dir       string    `json:"dir"`
	StartedAt time.Time `json:"started_at"`
	// Deadline is StartedAt + the timeout; --wait counts the timeout again from
	// its own start (after the upload of the evidence).
	Deadline        time.Time     `json:"deadline"`
	ConnectDeadline time.Time     `json:"connect_deadline,omitzero"`
	TimeoutMinutes  int           `json:"timeout_minutes"`
	ConnectMinutes  int           `json:"connect_timeout_minutes,omitempty"`
	SSH             string        `json:"ssh,omitempty"`
	Web             string        `json:"web,omitempty"`
	LimitActor      bool          `json:"limit_actor"`
	Actor           string        `json:"actor,omitempty"`
	Keys            int           `json:"keys,omitempty"`
	Server          string        `json:"server,omitempty"`
	Continue        continueWatch `json:"continue"`
	// The run identity guards against a state file left behind by another job
	// on a persistent self-hosted runner.
	RunID      string `json:"run_id,omitempty"`
	RunAttempt string `json:"run_attempt,omitempty"`
	Job        string `json:"job,omitempty"`
}

// runIdentity fills the run fields from the environment.
func (s *state) runIdentity(getenv func(string) string) {
	s.RunID, s.RunAttempt, s.Job = getenv("GITHUB_RUN_ID"), getenv("GITHUB_RUN_ATTEMPT"), getenv("GITHUB_JOB")
}

// save writes the state atomically (temp file + rename) so that a --wait
// never reads half a record.
func (s *state) save(out string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding tmate state: %w", err)
	}
	tmp, err := os.CreateTemp(out, ".tmate_state-*.json")
	if err != nil {
		return fmt.Errorf("writing tmate state: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing tmate state: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(out, StateFile)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing tmate state: %w", err)
	}
	return nil
}

// removeState deletes the state file once its session has ended, so that a
// later --wait does not pick up a dead session.
func removeState(out string) error {
	err := os.Remove(filepath.Join(out, StateFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing tmate state: %w", err)
	}
	return nil
}

// decodeState parses a state record and checks that it is usable. It is the
// one parser of the package that reads a file another process wrote.
func decodeState(r io.Reader) (*state, error) {
	var s state
	dec := json.NewDecoder(io.LimitReader(r, maxStateBytes))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("decoding tmate state: %w", err)
	}
	switch {
	case s.Version != stateVersion:
		return nil, fmt.Errorf("tmate state has version %d, want %d", s.Version, stateVersion)
	case s.Tmate == "" || s.Socket == "":
		return nil, errors.New("tmate state names no tmate binary or socket")
	case s.StartedAt.IsZero() || s.Deadline.IsZero():
		return nil, errors.New("tmate state has no start time or deadline")
	case s.Deadline.Before(s.StartedAt):
		return nil, errors.New("tmate state has a deadline before its start")
	case len(s.Continue.Files) == 0:
		return nil, errors.New("tmate state names no continue file")
	}
	return &s, nil
}

// loadState reads the state left by --detach. It returns nil, with a note
// saying why, when there is no usable state for this job: then --wait starts
// a session of its own.
func loadState(out string, getenv func(string) string) (s *state, note string) {
	f, err := os.Open(filepath.Join(out, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "no tmate session state in " + out
	}
	if err != nil {
		return nil, err.Error()
	}
	defer f.Close()
	s, err = decodeState(f)
	if err != nil {
		return nil, fmt.Sprintf("ignoring %s: %v", f.Name(), err)
	}
	var cur state
	cur.runIdentity(getenv)
	if s.RunID != cur.RunID || s.RunAttempt != cur.RunAttempt || s.Job != cur.Job {
		return nil, fmt.Sprintf("ignoring %s: it was left by run %s attempt %s job %s, this is run %s attempt %s job %s",
			f.Name(), s.RunID, s.RunAttempt, s.Job, cur.RunID, cur.RunAttempt, cur.Job)
	}
	return s, ""
}
