package tmate

import (
	"errors"
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"
)

// Limits of the minute-valued inputs (tmate_timeout_minutes and the connect
// timeout). 360 minutes is the longest a GitHub-hosted job may run.
const (
	MinTimeoutMinutes = 1
	MaxTimeoutMinutes = 360
)

// Defaults used when the matching Options field is zero.
const (
	DefaultOut              = "/tmp/repro"
	DefaultContinueFile     = "/tmp/continue"
	DefaultPollInterval     = time.Second
	DefaultAnnounceInterval = 30 * time.Second
	DefaultServerPort       = 22
	defaultAPIURL           = "https://api.github.com/"
)

// readyTimeoutMinutes bounds `tmate wait tmate-ready`: a tmate that cannot
// reach its server would otherwise hold an expensive GPU runner until the
// gate's timeout without ever showing a connection string.
const readyTimeoutMinutes = 5

// rootContinueFile is the continue file that the off-the-shelf tmate action
// honours at the root of the file system. It is a variable so tests can point
// it into a temporary directory.
var rootContinueFile = "/continue"

// ErrInvalidInput marks errors in the user's input (flags, spec values, the
// timeout that reaches the step through env:). The gate command exits 2 on it.
var ErrInvalidInput = errors.New("invalid input")

// EndReason says which end condition ended the gate.
type EndReason string

// The end reasons, also written as the step output end_reason and to tmate.txt.
const (
	EndContinueFile   EndReason = "continue-file"   // a continue file appeared (or was touched again)
	EndSessionEnded   EndReason = "session-ended"   // the tmate socket is gone or has-session fails
	EndTimeout        EndReason = "timeout"         // tmate_timeout_minutes elapsed
	EndConnectTimeout EndReason = "connect-timeout" // nobody attached within the connect timeout
	EndSignal         EndReason = "signal"          // SIGTERM/SIGINT (the context was cancelled)
	EndDetached       EndReason = "detached"        // --detach: the session stays open for a later --wait
	// The gate failed (Run returns "" with the error): EndBadInput on the user's input (an
	// error wrapping ErrInvalidInput: a flag or spec value, an actor whose keys cannot limit
	// access; the command exits 2) before any session was open, EndNoSession otherwise before
	// any session was open (tmate missing, the actor's SSH keys not fetched, new-session
	// failed; nobody could attach), EndError after one was started but never became usable.
	EndBadInput  EndReason = "bad-input"
	EndNoSession EndReason = "no-session"
	EndError     EndReason = "error"
)

// Options configures [Run]. Zero values select the documented defaults; the
// environment is read only through Getenv.
type Options struct {
	// The flags of `debugflow-step gate`, in the order the generated workflow writes them: the
	// tags give both the gate's flags and the generated command line (package stepflag).

	// Out is the artifact directory (tmate.txt, tmate_state.json); created if
	// missing. Default /tmp/repro.
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory for tmate.txt and tmate_state.json (created if missing)"`
	// TimeoutMinutes is the gate's timeout as given by the user (it reaches the
	// step through env:), validated as an integer 1..360.
	TimeoutMinutes string `flag:"timeout-minutes" usage:"end the session after this many minutes, an integer 1..360 (required)"`
	// ContinueFiles are the files whose appearance frees the job. Default
	// /tmp/continue. /continue and $GITHUB_WORKSPACE/continue are always
	// honoured as well.
	ContinueFiles []string `flag:"continue-file" default:"/tmp/continue" usage:"file whose creation frees the job (repeatable); /continue and $GITHUB_WORKSPACE/continue are always honoured"`
	// ConnectTimeoutMinutes, when not empty or "0", ends the gate if nobody has
	// attached (tmate_num_clients stayed 0) within that many minutes (1..360).
	ConnectTimeoutMinutes string `flag:"connect-timeout-minutes" usage:"end the session if nobody attached within this many minutes (0 or empty: off)"`
	// LimitActor restricts access to the public SSH keys of Actor. When false
	// anyone with the SSH command or web URL can attach, and the gate says so.
	LimitActor bool `flag:"limit-actor" default:"true" usage:"allow only the public SSH keys of $GITHUB_ACTOR to attach"`

	// ServerHost, ServerPort and the fingerprints select a self-hosted tmate
	// server (written to a tmate config file passed with -f). ServerPort
	// defaults to 22; at least one fingerprint is required with a host.
	ServerHost               string `flag:"server-host" usage:"self-hosted tmate server host"`
	ServerPort               int    `flag:"server-port" usage:"self-hosted tmate server SSH port (default 22 with --server-host)"`
	ServerRSAFingerprint     string `flag:"server-rsa-fingerprint" usage:"self-hosted tmate server RSA host key fingerprint (SHA256:...)"`
	ServerED25519Fingerprint string `flag:"server-ed25519-fingerprint" usage:"self-hosted tmate server ED25519 host key fingerprint (SHA256:...)"`

	// Detach opens the session, records it in Out/tmate_state.json and
	// returns EndDetached at once. Wait picks such a session up (or starts a
	// new one when there is none) and waits for an end condition.
	Detach bool `flag:"detach" usage:"open the session and return at once; a later --wait step waits for it"`
	Wait   bool `flag:"wait" usage:"wait for the session opened by --detach (or open one when there is none)"`

	// TmatePath is the tmate binary; "" looks it up on PATH and installs it
	// with apt-get when missing.
	TmatePath string `flag:"tmate" usage:"tmate binary (default: look it up on PATH, install it with apt-get when missing)"`

	// What follows is set in Go, never from the command line.

	// Actor, Token, APIURL and Workspace default from GITHUB_ACTOR,
	// GITHUB_TOKEN, GITHUB_API_URL and GITHUB_WORKSPACE. The token is only sent
	// to the API, never printed.
	Actor, Token, APIURL, Workspace string `flag:"-"`

	// HTTPClient is used for the GitHub API; nil means a client with a 30 s
	// timeout.
	HTTPClient *http.Client `flag:"-"`
	// Action writes notices, warnings, the step summary and the end_reason
	// output. nil means githubactions.New writing to Stdout with Getenv.
	Action *githubactions.Action `flag:"-"`

	// Stdout receives the gate's log lines, Stderr the output of apt-get.
	Stdout, Stderr io.Writer `flag:"-"`
	// Getenv reads the environment; default os.Getenv.
	Getenv func(string) string `flag:"-"`
	// Now is the clock; default time.Now.
	Now func() time.Time `flag:"-"`
	// PollInterval is how often the end conditions are checked (default 1 s;
	// the gate never sleeps past a deadline regardless).
	PollInterval time.Duration `flag:"-"`
	// AnnounceInterval is how often the SSH command and the time left are
	// printed again (default 30 s).
	AnnounceInterval time.Duration `flag:"-"`
	// Minute is how long one minute of TimeoutMinutes and
	// ConnectTimeoutMinutes lasts; zero means time.Minute. Tests shrink it.
	Minute time.Duration `flag:"-"`

	// Runner runs tmate, apt-get, sudo and ssh-keygen; default ExecRunner.
	Runner CommandRunner `flag:"-"`
	// Home is where the client SSH keys tmate needs are created when missing; default $HOME.
	Home string `flag:"-"`
}

// withDefaults returns a copy of o with every zero field filled in.
func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Out == "" {
		o.Out = DefaultOut
	}
	if len(o.ContinueFiles) == 0 {
		o.ContinueFiles = []string{DefaultContinueFile}
	}
	if o.Actor == "" {
		o.Actor = o.Getenv("GITHUB_ACTOR")
	}
	if o.Token == "" {
		o.Token = o.Getenv("GITHUB_TOKEN")
	}
	if o.APIURL == "" {
		o.APIURL = o.Getenv("GITHUB_API_URL")
	}
	if o.APIURL == "" {
		o.APIURL = defaultAPIURL
	}
	if o.Workspace == "" {
		o.Workspace = o.Getenv("GITHUB_WORKSPACE")
	}
	if o.Home == "" {
		o.Home = o.Getenv("HOME")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Action == nil {
		o.Action = githubactions.New(githubactions.WithWriter(o.Stdout), githubactions.WithGetenv(o.Getenv))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.AnnounceInterval <= 0 {
		o.AnnounceInterval = DefaultAnnounceInterval
	}
	if o.Minute <= 0 {
		o.Minute = time.Minute
	}
	if o.Runner == nil {
		o.Runner = ExecRunner{}
	}
	if o.ServerHost != "" && o.ServerPort == 0 {
		o.ServerPort = DefaultServerPort
	}
	return o
}

// digits is what a minute count may look like: no sign, no spaces inside, no
// unit. Leading and trailing blanks (from env: values) are trimmed first.
var digits = lazyre.New(`^[0-9]+$`)

// ParseTimeoutMinutes validates a minute count given as text (a workflow
// input that reached the step through env:) and returns it. name is the flag
// or input named in the error. The error wraps ErrInvalidInput.
func ParseTimeoutMinutes(name, value string) (int, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, fmt.Errorf("%w: %s is empty: give a whole number of minutes from %d to %d",
			ErrInvalidInput, name, MinTimeoutMinutes, MaxTimeoutMinutes)
	}
	n, err := strconv.Atoi(v)
	if !digits.MatchString(v) || err != nil {
		return 0, fmt.Errorf("%w: %s %q is not a whole number of minutes: give an integer from %d to %d",
			ErrInvalidInput, name, value, MinTimeoutMinutes, MaxTimeoutMinutes)
	}
	if n < MinTimeoutMinutes || n > MaxTimeoutMinutes {
		return 0, fmt.Errorf("%w: %s %d is out of range: give an integer from %d to %d",
			ErrInvalidInput, name, n, MinTimeoutMinutes, MaxTimeoutMinutes)
	}
	return n, nil
}

// parseConnectTimeout is ParseTimeoutMinutes where "" and "0" mean "off".
func parseConnectTimeout(value string) (int, error) {
	v := strings.TrimSpace(value)
	if v == "" || v == "0" {
		return 0, nil
	}
	return ParseTimeoutMinutes("--connect-timeout-minutes", value)
}

// hostPattern accepts DNS names and IPv4 addresses; IPv6 literals are
// accepted without brackets. It keeps quotes and blanks out of the tmate
// config file.
var hostPattern = lazyre.New(`^[A-Za-z0-9]([A-Za-z0-9.:-]*[A-Za-z0-9])?$`)

// ValidServerHost reports whether host is accepted as --server-host: a DNS
// name or an IP address, nothing a tmate config line could be broken by.
// `debugflow validate` checks tmate.server.host with it, so a bad host is
// refused on the laptop, not by the gate in a continue-on-error step.
func ValidServerHost(host string) bool { return hostPattern.MatchString(host) }

// ValidFingerprint reports whether f is accepted as a server fingerprint.
func ValidFingerprint(f string) bool { return fingerprintPattern.MatchString(f) }

// fingerprintPattern accepts what ssh-keygen -l prints: SHA256:base64 (with or
// without padding) or MD5 hex pairs with or without the MD5: prefix.
var fingerprintPattern = lazyre.New(`^(SHA256:[A-Za-z0-9+/]+=*|(MD5:)?[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){15})$`)

// validate checks everything that does not need the network or tmate, so
// that usage errors surface before anything is installed or started.
func (o Options) validate() (timeout, connect int, err error) {
	if o.Detach && o.Wait {
		return 0, 0, fmt.Errorf("%w: --detach and --wait exclude each other: --detach opens the session, a later --wait step waits for it", ErrInvalidInput)
	}
	timeout, err = ParseTimeoutMinutes("--timeout-minutes", o.TimeoutMinutes)
	if err != nil {
		return 0, 0, err
	}
	connect, err = parseConnectTimeout(o.ConnectTimeoutMinutes)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range o.ContinueFiles {
		if strings.TrimSpace(f) == "" {
			return 0, 0, fmt.Errorf("%w: --continue-file must not be empty", ErrInvalidInput)
		}
	}
	if err := o.validateServer(); err != nil {
		return 0, 0, err
	}
	return timeout, connect, nil
}

func (o Options) validateServer() error {
	if o.ServerHost == "" {
		if o.ServerPort != 0 || o.ServerRSAFingerprint != "" || o.ServerED25519Fingerprint != "" {
			return fmt.Errorf("%w: --server-port and the server fingerprints need --server-host", ErrInvalidInput)
		}
		return nil
	}
	if !hostPattern.MatchString(o.ServerHost) {
		return fmt.Errorf("%w: --server-host %q is not a host name or address", ErrInvalidInput, o.ServerHost)
	}
	if o.ServerPort < 1 || o.ServerPort > 65535 {
		return fmt.Errorf("%w: --server-port %d is out of range 1..65535", ErrInvalidInput, o.ServerPort)
	}
	if o.ServerRSAFingerprint == "" && o.ServerED25519Fingerprint == "" {
		return fmt.Errorf("%w: --server-host %s needs the server's --server-rsa-fingerprint and/or --server-ed25519-fingerprint (tmate refuses a server whose host key it cannot check)", ErrInvalidInput, o.ServerHost)
	}
	for _, f := range []struct{ flag, value string }{
		{"--server-rsa-fingerprint", o.ServerRSAFingerprint},
		{"--server-ed25519-fingerprint", o.ServerED25519Fingerprint},
	} {
		if f.value != "" && !fingerprintPattern.MatchString(f.value) {
			return fmt.Errorf("%w: %s %q is not an SSH fingerprint (expected SHA256:... as printed by ssh-keygen -l)", ErrInvalidInput, f.flag, f.value)
		}
	}
	return nil
}
