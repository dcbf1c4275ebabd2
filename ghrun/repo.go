package ghrun

import (
	"fmt"
	"net/url"
	"regexp"
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

const defaultHost = "github.com"

var (
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$`)
	namePattern  = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	hostPattern  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?$`)
)

// ParseRepo parses the -R value: OWNER/REPO or HOST/OWNER/REPO (gh's syntax).
func ParseRepo(s string) (Repo, error) {
	parts := strings.Split(strings.TrimSpace(s), "/")
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
var scpLike = regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.+)$`)

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
			return Repo{}, fmt.Errorf("remote URL is not valid: %s", redactURLString(remote))
		}
		switch u.Scheme {
		case "https", "http":
			host = u.Host // keep a port: the API lives on the same one
		case "ssh", "git", "git+ssh", "ssh+git":
			host = u.Hostname() // the ssh port says nothing about the API
		default:
			return Repo{}, fmt.Errorf("remote %s: unsupported scheme %q", redactURLString(remote), u.Scheme)
		}
		path = u.Path
	} else if m := scpLike.FindStringSubmatch(remote); m != nil {
		host, path = m[1], m[2]
	} else {
		return Repo{}, fmt.Errorf("remote %q is not a URL git understands", remote)
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	parts := strings.Split(path, "/")
	if len(parts) != 2 {
		return Repo{}, fmt.Errorf("remote %s: expected a path OWNER/REPO, got %q", redactURLString(remote), path)
	}
	r := Repo{Host: strings.ToLower(host), Owner: parts[0], Name: parts[1]}
	if err := r.check(); err != nil {
		return Repo{}, fmt.Errorf("remote %s: %w", redactURLString(remote), err)
	}
	return r, nil
}

// userinfo matches the user info of URLs inside free text.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'"]+@`)

// redactUserinfo hides URL user info (where a token may be) anywhere in s.
func redactUserinfo(s string) string { return userinfo.ReplaceAllString(s, "${1}***@") }

// redactURLString hides the password part of URL user info, which is where a
// token lives when someone clones with https://user:TOKEN@host/...
func redactURLString(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return redactUserinfo(s)
	}
	// The token may be the user name (https://TOKEN@host) or the password.
	u.User = nil
	clean := u.String()
	return strings.Replace(clean, "://", "://***@", 1)
}
