package ghrun

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"net/url"
	"strings"
)

// Repo names a GitHub repository. Host is empty when it was not given and
// could not be inferred; the client then uses GH_HOST or github.com.
type Repo struct {
	Host  string
	Owner string
	Name  string
}

// String returns OWNER/REPO, prefixed with the host when it is not github.com.
func (r Repo) String() string {
	if r.Host != "" && r.Host != defaultHost {
		return r.Host + "/" + r.Owner + "/" + r.Name
	}
	return r.Owner + "/" + r.Name
}

var (
	ownerPattern = lazyre.New(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$`)
	namePattern  = lazyre.New(`^[A-Za-z0-9._-]+$`)
	hostPattern  = lazyre.New(`^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?$`)
)

// ParseRepo parses the -R value: OWNER/REPO, HOST/OWNER/REPO, or the
// repository's URL in any form git accepts (gh's syntax). Credentials in it
// are dropped and never shown.
func ParseRepo(s string) (Repo, error) {
	s = strings.TrimSpace(s)
	if at := strings.LastIndex(s, "@"); at >= 0 && !strings.Contains(s, "://") && !strings.Contains(s[at:], ":") {
		// USER:TOKEN@HOST/OWNER/REPO: the credentials are dropped, never used or shown.
		r, err := ParseRepo(s[at+1:])
		if err != nil {
			return Repo{}, fmt.Errorf("repository %s: %w", redactHost(s), err)
		}
		return r, nil
	}
	if looksLikeRemote(s) {
		r, err := RepoFromRemote(s)
		if err != nil {
			return Repo{}, fmt.Errorf("repository %s: %w", redactRemote(s), err)
		}
		return r, nil
	}
	parts := strings.Split(s, "/")
	var r Repo
	switch len(parts) {
	case 2:
		r = Repo{Owner: parts[0], Name: parts[1]}
	case 3:
		r = Repo{Host: strings.ToLower(parts[0]), Owner: parts[1], Name: parts[2]}
	default:
		return Repo{}, fmt.Errorf("repository %q: expected OWNER/REPO or HOST/OWNER/REPO", s)
	}
	if err := r.check(); err != nil {
		return Repo{}, fmt.Errorf("repository %q: %w", s, err)
	}
	return r, nil
}

// looksLikeRemote tells a git URL (scheme://..., user@host:path, host:path)
// from [HOST[:PORT]/]OWNER/REPO.
func looksLikeRemote(s string) bool {
	if strings.Contains(s, "://") || strings.Contains(s, "@") {
		return true
	}
	first, _, _ := strings.Cut(s, "/")
	_, port, found := strings.Cut(first, ":")
	if !found {
		return false
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return true // host:owner/repo, not host:port
		}
	}
	return port == ""
}

func (r Repo) check() error {
	if r.Host != "" && !hostPattern.MatchString(r.Host) {
		return fmt.Errorf("%q is not a host name", r.Host)
	}
	if !ownerPattern.MatchString(r.Owner) {
		return fmt.Errorf("%q is not a valid owner", r.Owner)
	}
	if !namePattern.MatchString(r.Name) || r.Name == "." || r.Name == ".." {
		return fmt.Errorf("%q is not a valid repository name", r.Name)
	}
	return nil
}

// scpLike matches git's scp-like syntax: [user@]host:owner/repo.
var scpLike = lazyre.New(`^(?:[^@/]+@)?([^:/]+):(.+)$`)

// RepoFromRemote parses a git remote URL in the forms git accepts for GitHub:
// https://host/owner/repo(.git), ssh://[user@]host[:port]/owner/repo(.git),
// git@host:owner/repo(.git), git://host/owner/repo. Credentials embedded in an
// https URL are dropped and never appear in errors.
func RepoFromRemote(remote string) (Repo, error) {
	remote = strings.TrimSpace(remote)
	var host, path string
	if strings.Contains(remote, "://") {
		u, err := url.Parse(remote)
		if err != nil {
			return Repo{}, fmt.Errorf("remote URL is not valid: %s", redactRemote(remote))
		}
		switch u.Scheme {
		case "https", "http":
			host = u.Host // keep a port: the API lives on the same one
		case "ssh", "git", "git+ssh", "ssh+git":
			host = u.Hostname() // the ssh port says nothing about the API
		default:
			return Repo{}, fmt.Errorf("remote %s: unsupported scheme %q", redactRemote(remote), u.Scheme)
		}
		path = u.Path
	} else if m := scpLike.FindStringSubmatch(remote); m != nil && !strings.Contains(m[2], "@") {
		host, path = m[1], m[2] // (an '@' in the path means the user part held a ':': not a remote)
	} else {
		return Repo{}, fmt.Errorf("remote %q is not a URL git understands", redactRemote(remote))
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	parts := strings.Split(path, "/")
	if len(parts) != 2 {
		return Repo{}, fmt.Errorf("remote %s: expected a path OWNER/REPO, got %q", redactRemote(remote), redactHost(path))
	}
	r := Repo{Host: strings.ToLower(host), Owner: parts[0], Name: parts[1]}
	if err := r.check(); err != nil {
		return Repo{}, fmt.Errorf("remote %s: %w", redactRemote(remote), err)
	}
	return r, nil
}
