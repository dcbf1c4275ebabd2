package ghrun

import (
	"errors"
	"github.com/debugflow/debugflow/internal/lazyre"
	"io"
	"net/url"
	"strings"
	"sync"
)

// mask replaces a secret in output.
const mask = "***"

// longSecret is the length from which a secret is masked wherever it appears.
// A shorter one (a test token such as "x", a one-letter path segment) is
// masked only where it stands as a whole word, so that "exit" keeps its x.
// Real GitHub tokens are 40 characters or more.
const longSecret = 16

// secretSet is the list of values that must never be printed. It grows while a
// command runs (a token from `gh auth token` is only known once asked for), so
// writers hold the set, not a copy of it.
type secretSet struct {
	mu   sync.Mutex
	list []string
}

// add records non-empty secrets (surrounding space trimmed, as the values are used).
func (s *secretSet) add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range secrets {
		sec = strings.TrimSpace(sec)
		if sec != "" && !contains(s.list, sec) {
			s.list = append(s.list, sec)
		}
	}
}

func (s *secretSet) all() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// redactWriter masks secrets in every Write. Callers write whole lines, so a
// secret is never split across two writes.
type redactWriter struct {
	w       io.Writer
	secrets *secretSet
}

func newRedactWriter(w io.Writer, secrets *secretSet) *redactWriter {
	if w == nil {
		w = io.Discard
	}
	return &redactWriter{w: w, secrets: secrets}
}

func (r *redactWriter) Write(p []byte) (int, error) {
	s := redact(string(p), r.secrets.all())
	if _, err := io.WriteString(r.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redact masks every secret in s: a long one wherever it appears, a short one
// only as a whole word (see longSecret). Longer secrets go first, so a secret
// that contains another is masked whole. Matching ignores ASCII case: a
// server that echoes the token lowercased (or uppercased) must not print it.
func redact(s string, secrets []string) string {
	sorted := append([]string(nil), secrets...)
	for i := 1; i < len(sorted); i++ { // insertion sort by length, longest first; lists are tiny
		for j := i; j > 0 && len(sorted[j]) > len(sorted[j-1]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	for _, sec := range sorted {
		if sec != "" {
			s = redactOne(s, sec, len(sec) < longSecret)
		}
	}
	return s
}

// redactOne masks sec in s, in any ASCII case; with wholeWord, only where it
// is not part of a longer word.
func redactOne(s, sec string, wholeWord bool) string {
	// ASCII lower-casing keeps every byte where it is, so an index into folded is one into s.
	folded, want := asciiLower(s), asciiLower(sec)
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(folded[i:], want)
		if j < 0 {
			break
		}
		j += i
		end := j + len(sec)
		if wholeWord && ((j > 0 && isWordByte(s[j-1])) || (end < len(s) && isWordByte(s[end]))) {
			b.WriteString(s[i : j+1]) // part of a longer word: keep it, look again one byte on
			i = j + 1
			continue
		}
		b.WriteString(s[i:j])
		b.WriteString(mask)
		i = end
	}
	if i == 0 {
		return s
	}
	b.WriteString(s[i:])
	return b.String()
}

// asciiLower lowercases the ASCII letters of s and nothing else, so its
// bytes stay at their offsets.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isWordByte reports the bytes that continue a word (or a token): letters,
// digits, '_' and '-', and any byte of a multi-byte UTF-8 character.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c >= 0x80
}

// redactedError carries a message with the secrets removed while keeping the
// original chain for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with every secret removed from its message.
func redactErr(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := redact(msg, secrets)
	if clean == msg {
		return err
	}
	var exit *ExitError
	if errors.As(err, &exit) && exit == err {
		return &ExitError{Code: exit.Code, Err: &redactedError{msg: clean, err: exit.Err}}
	}
	return &redactedError{msg: clean, err: err}
}

// userinfo matches the user info of URLs inside free text.
var userinfo = lazyre.New(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'"]+@`)

// redactUserinfo hides URL user info (where a token may be) anywhere in s.
func redactUserinfo(s string) string { return userinfo.ReplaceAllString(s, "${1}"+mask+"@") }

// redactURLString hides what in a URL may be a secret: the user info (a token
// lives there when someone clones with https://user:TOKEN@host/...) and the
// query (signed links, ?access_token=...).
func redactURLString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return redactUserinfo(s)
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = mask, false
	}
	clean := u.String()
	if hadUser {
		clean = strings.Replace(clean, "://", "://"+mask+"@", 1)
	}
	return clean
}

// redactRemote hides credentials in a git remote in any of git's forms:
// URLs (see redactURLString) and scp-like user@host:path, where whatever
// comes before the '@' is hidden.
func redactRemote(s string) string {
	if u, err := url.Parse(s); err == nil && strings.Contains(s, "://") && u.Opaque == "" {
		return redactURLString(s)
	}
	return redactHost(s) // not a URL Go reads as one: hide whatever precedes the last '@'
}

// redactHost hides user info given where a bare host name is expected
// (GH_HOST=user:TOKEN@host, -R user:TOKEN@host/OWNER/REPO).
func redactHost(s string) string {
	if i := strings.LastIndex(s, "@"); i >= 0 && s[:i] != "git" { // git@ is the ssh user, not a secret
		return mask + s[i:]
	}
	return s
}

// redactAPIURL shows a GITHUB_API_URL value as scheme://host/… only: its path
// or query may carry a key (a proxy in front of GitHub), so neither is shown.
func redactAPIURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || u.Scheme == "" {
		return "(value not shown)"
	}
	out := u.Scheme + "://" + redactHost(u.Host)
	if u.User != nil {
		out = u.Scheme + "://" + mask + "@" + u.Host
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return out + "/…"
	}
	return out + "/"
}

// apiURLSecrets lists the parts of an explicit API URL that may be secret:
// path segments other than GitHub's own (api, v3) and query values. They are
// masked in every message, since request URLs appear in network errors and
// retry lines.
func apiURLSecrets(raw string) []string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil
	}
	var out []string
	for _, seg := range strings.Split(u.Path, "/") {
		if seg != "" && seg != "api" && seg != "v3" {
			out = append(out, seg)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	if u.User != nil {
		out = append(out, u.User.Username())
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	return out
}
