package tmate

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeAPI is a local GitHub REST API serving /users/{user}/keys, under / and
// under /api/v3/ (GitHub Enterprise Server).
type fakeAPI struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string // Authorization headers seen
	paths []string
}

const (
	octocatKey1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOcto1"
	octocatKey2 = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQocto2"
)

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	api := &fakeAPI{}
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.mu.Lock()
		api.auths = append(api.auths, r.Header.Get("Authorization"))
		api.paths = append(api.paths, r.URL.Path)
		api.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Header.Get("Authorization") == "Bearer bad-token" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		path := strings.TrimPrefix(r.URL.Path, "/api/v3")
		switch path {
		case "/users/octocat/keys":
			fmt.Fprintf(w, `[{"id":1,"key":%q},{"id":2,"key":%q}]`, octocatKey1, octocatKey2)
		case "/users/nokeys/keys":
			fmt.Fprint(w, `[]`)
		case "/users/many/keys":
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			if page < 2 {
				next := fmt.Sprintf("%s%s?page=2&per_page=100", api.URL, r.URL.Path)
				w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, next, next))
				fmt.Fprint(w, `[{"id":1,"key":"ssh-ed25519 AAAApage1"}]`)
				return
			}
			fmt.Fprint(w, `[{"id":2,"key":"ssh-ed25519 AAAApage2"},{"id":3,"key":""}]`)
		case "/users/limited/keys":
			w.Header().Set("X-RateLimit-Limit", "60")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Date(2024, 5, 1, 13, 0, 0, 0, time.UTC).Unix(), 10))
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"API rate limit exceeded"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
		}
	}))
	t.Cleanup(api.Close)
	return api
}

func TestFetchActorKeys(t *testing.T) {
	api := newFakeAPI(t)
	tests := []struct {
		name     string
		apiURL   string // "" = the fake's root
		actor    string
		token    string
		want     []string
		wantErr  string
		wantPath string
	}{
		{name: "keys", actor: "octocat", token: "tok", want: []string{octocatKey1, octocatKey2}, wantPath: "/users/octocat/keys"},
		{name: "no token", actor: "octocat", want: []string{octocatKey1, octocatKey2}},
		{name: "enterprise", apiURL: "/api/v3", actor: "octocat", want: []string{octocatKey1, octocatKey2}, wantPath: "/api/v3/users/octocat/keys"},
		{name: "two pages", actor: "many", want: []string{"ssh-ed25519 AAAApage1", "ssh-ed25519 AAAApage2"}},
		{name: "no keys", actor: "nokeys", wantErr: `GitHub user "nokeys" has no public SSH keys: add one at {root}/settings/keys (or set limit_to_actor: false in the spec to allow anyone with the link)`},
		{name: "no keys enterprise", apiURL: "/api/v3", actor: "nokeys", wantErr: `add one at {root}/settings/keys (`},
		{name: "404 user", actor: "ghost", wantErr: `GitHub user "ghost" not found at {api}/ (check GITHUB_ACTOR and GITHUB_API_URL)`},
		{name: "401", actor: "octocat", token: "bad-token", wantErr: "rejected the token in GITHUB_TOKEN (401 Unauthorized)"},
		{name: "rate limit", actor: "limited", wantErr: "rate limit is exhausted until 13:00:00 UTC"},
		{name: "no actor", actor: "", wantErr: "GITHUB_ACTOR is not set"},
		{name: "bot", actor: "github-actions[bot]", wantErr: `the run was started by the bot "github-actions[bot]"`},
		{name: "not a login", actor: "../admin", wantErr: `GITHUB_ACTOR "../admin" is not a GitHub login`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newGitHubClient(api.Client(), api.URL+tc.apiURL, tc.token)
			if err != nil {
				t.Fatal(err)
			}
			api.mu.Lock()
			api.auths, api.paths = nil, nil
			api.mu.Unlock()
			got, err := fetchActorKeys(context.Background(), c, tc.actor)
			if tc.wantErr != "" {
				want := strings.NewReplacer("{api}", api.URL+tc.apiURL, "{root}", api.URL).Replace(tc.wantErr)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v\nwant it to contain %q", err, want)
				}
				if tc.token != "" && strings.Contains(err.Error(), tc.token) {
					t.Errorf("the error prints the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			wantAuth := ""
			if tc.token != "" {
				wantAuth = "Bearer " + tc.token
			}
			if api.auths[0] != wantAuth {
				t.Errorf("Authorization = %q, want %q", api.auths[0], wantAuth)
			}
			if tc.wantPath != "" && api.paths[0] != tc.wantPath {
				t.Errorf("path = %q, want %q", api.paths[0], tc.wantPath)
			}
		})
	}
}

func TestKeysSettingsURL(t *testing.T) {
	for api, want := range map[string]string{
		"https://api.github.com":             "https://github.com/settings/keys",
		"https://ghe.example.com/api/v3":     "https://ghe.example.com/settings/keys",
		"https://ghe.example.com/api/v3/":    "https://ghe.example.com/settings/keys",
		"http://127.0.0.1:8080/custom/root/": "http://127.0.0.1:8080/custom/root/settings/keys",
	} {
		c, err := newGitHubClient(http.DefaultClient, api, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := keysSettingsURL(c); got != want {
			t.Errorf("keysSettingsURL(%s) = %s, want %s", api, got, want)
		}
	}
}

func TestNewGitHubClientRejectsBadURL(t *testing.T) {
	for _, u := range []string{"api.github.com", "://x", "/relative"} {
		if _, err := newGitHubClient(http.DefaultClient, u, ""); err == nil {
			t.Errorf("newGitHubClient(%q) accepted a non-absolute URL", u)
		}
	}
}

func TestWriteAuthorizedKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authorized_keys")
	if err := writeAuthorizedKeys(path, "octocat", []string{octocatKey1, octocatKey2}); err != nil {
		t.Fatal(err)
	}
	want := octocatKey1 + " github:octocat\n" + octocatKey2 + " github:octocat\n"
	if got := readFile(t, path); got != want {
		t.Errorf("authorized_keys:\n%s\nwant:\n%s", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestKeysTokenStaysOnAPIHost: the token goes to GITHUB_API_URL's scheme and host only. An
// API answer that redirects to another host (a renamed user, a hostile proxy) must not carry
// it there, and the keys that come back from the other host are still read.
func TestKeysTokenStaysOnAPIHost(t *testing.T) {
	var mu sync.Mutex
	var otherAuth []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherAuth = append(otherAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprintf(w, `[{"id":1,"key":%q}]`, octocatKey1)
	}))
	defer other.Close()
	var apiAuth string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		apiAuth = r.Header.Get("Authorization")
		mu.Unlock()
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusMovedPermanently)
	}))
	defer api.Close()
	// The two servers share 127.0.0.1 and differ by port: a different origin all the same.
	c, err := newGitHubClient(&http.Client{}, api.URL, "s3cr3t-token")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := fetchActorKeys(context.Background(), c, "octocat")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Errorf("keys = %q", keys)
	}
	mu.Lock()
	defer mu.Unlock()
	if apiAuth != "Bearer s3cr3t-token" {
		t.Errorf("the API got Authorization %q, want the token", apiAuth)
	}
	if len(otherAuth) != 1 || otherAuth[0] != "" {
		t.Errorf("the host the API redirected to got Authorization %q, want none", otherAuth)
	}
}

// TestNewGitHubClientRefusesUnsafeURL: the keys decide who may log in to the runner, so they
// come over https (plain http only from this machine), and GITHUB_API_URL carries no
// credentials (they would be sent and printed).
func TestNewGitHubClientRefusesUnsafeURL(t *testing.T) {
	for url, want := range map[string]string{
		"http://api.example.com/":                "plain http",
		"http://10.0.0.1:8080/api/v3":            "plain http",
		"https://user:pw@ghe.example.com/api/v3": "credentials",
		"ftp://ghe.example.com/":                 "http(s)",
	} {
		_, err := newGitHubClient(http.DefaultClient, url, "tok")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("newGitHubClient(%q) = %v, want an error about %s", url, err, want)
			continue
		}
		if strings.Contains(err.Error(), "pw@") {
			t.Errorf("the error prints the password: %v", err)
		}
	}
	for _, url := range []string{"http://127.0.0.1:8080/", "http://localhost/api/v3", "http://[::1]:9/", "https://ghe.example.com/api/v3"} {
		if _, err := newGitHubClient(http.DefaultClient, url, "tok"); err != nil {
			t.Errorf("newGitHubClient(%q): %v", url, err)
		}
	}
}

// TestKeysAnswerIsBounded: a server that streams a page without end is cut off, not read
// into memory until the 30 s client timeout.
func TestKeysAnswerIsBounded(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"id":1,"key":"`)
		chunk := strings.Repeat("A", 64<<10)
		for i := 0; i < (64<<20)/len(chunk); i++ {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
		fmt.Fprint(w, `"}]`)
	}))
	defer api.Close()
	c, err := newGitHubClient(&http.Client{}, api.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = fetchActorKeys(context.Background(), c, "octocat")
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want the answer refused as too large", err)
	}
}

func TestNextPage(t *testing.T) {
	for link, want := range map[string]int{
		"": 0,
		`<https://api.github.com/user/1/keys?page=2&per_page=100>; rel="next", <https://api.github.com/user/1/keys?page=5&per_page=100>; rel="last"`: 2,
		`<https://api.github.com/user/1/keys?page=1>; rel="prev", <https://api.github.com/user/1/keys?page=1>; rel="first"`:                          0,
		`<https://x/keys?page=zero>; rel="next"`: 0,
		`<https://x/keys?page=-3>; rel="next"`:   0,
		`garbage`:                                0,
	} {
		if got := nextPage(link); got != want {
			t.Errorf("nextPage(%q) = %d, want %d", link, got, want)
		}
	}
}

// debugflow-step gets its one GitHub API call from net/http: go-github (the debugflow side's
// client) is not linked into the step binary.
func TestStepBinaryDoesNotLinkGoGitHub(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/debugflow/debugflow/cmd/debugflow-step").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/google/go-github/") {
			t.Errorf("debugflow-step links %s", dep)
		}
	}
}
