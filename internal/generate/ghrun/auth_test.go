package ghrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debugflow/debugflow/internal/generate/ghrun/ghtest"
)

func TestRedact(t *testing.T) {
	long := "ghp_LONGtoken0123456789abcdefghijkl"
	tests := []struct {
		name    string
		in      string
		secrets []string
		want    string
	}{
		{name: "long token anywhere", in: "Bearer " + long + " and x" + long + "y", secrets: []string{long},
			want: "Bearer *** and x***y"},
		{name: "short token only as a whole word", in: "exit x; Bearer x. fix xx x-ray https://x@github.com ?t=x&", secrets: []string{"x"},
			want: "exit ***; Bearer ***. fix xx x-ray https://***@github.com ?t=***&"},
		{name: "short token at both ends", in: "ab", secrets: []string{"ab"}, want: "***"},
		{name: "short token inside words is kept", in: "tab able cab", secrets: []string{"ab"}, want: "tab able cab"},
		{name: "next to a multi-byte letter is a word", in: "éab abé ab", secrets: []string{"ab"}, want: "éab abé ***"},
		{name: "longest first", in: "k k1234567890123456789", secrets: []string{"k", "k1234567890123456789"}, want: "*** ***"},
		{name: "no secrets", in: "plain", secrets: []string{""}, want: "plain"},
		// A server that echoes the token in another case printed it before.
		{name: "long token in any case", in: "echo " + strings.ToLower(long) + " " + strings.ToUpper(long), secrets: []string{long},
			want: "echo *** ***"},
		{name: "short token in any case, whole words", in: "Exit X; tab AB", secrets: []string{"x", "ab"}, want: "Exit ***; tab ***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact(tt.in, tt.secrets); got != tt.want {
				t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactURLs(t *testing.T) {
	tests := []struct{ fn, in, want string }{
		{"url", "https://u:SECRET@github.com/a/b", "https://***@github.com/a/b"},
		{"url", "https://SECRET@github.com/a/b?sig=SECRET", "https://***@github.com/a/b?***"},
		{"remote", "u:SECRET@host:a/b", "***@host:a/b"},
		{"remote", "git@github.com:a/b.git", "git@github.com:a/b.git"},
		{"host", "u:SECRET@ghe.example.com", "***@ghe.example.com"},
		{"api", "https://proxy.example.com/SECRET/api/v3?key=SECRET", "https://proxy.example.com/…"},
		{"api", "https://u:SECRET@proxy.example.com/", "https://***@proxy.example.com/"},
		{"api", "https://api.github.com", "https://api.github.com/"},
		{"api", "%%SECRET", "(value not shown)"},
	}
	for _, tt := range tests {
		var got string
		switch tt.fn {
		case "url":
			got = redactURLString(tt.in)
		case "remote":
			got = redactRemote(tt.in)
		case "host":
			got = redactHost(tt.in)
		case "api":
			got = redactAPIURL(tt.in)
		}
		if got != tt.want {
			t.Errorf("%s(%q) = %q, want %q", tt.fn, tt.in, got, tt.want)
		}
	}
	if got := apiURLSecrets("https://u:p@proxy.example.com/k3y/api/v3?key=v4lue"); strings.Join(got, ",") != "k3y,v4lue,u,p" {
		t.Errorf("apiURLSecrets = %q", got)
	}
}

// world plays DNS and the network for the client: requests to a routed host
// name go to a local server, as if that name resolved to it; 127.0.0.1 goes
// straight through; any other host is unreachable. It records what the
// client sent to each host.
type world struct {
	routes map[string]*httptest.Server
	mu     sync.Mutex
	sent   []sentRequest
}

type sentRequest struct{ Host, Path, Auth string }

func (w *world) RoundTrip(req *http.Request) (*http.Response, error) {
	w.mu.Lock()
	w.sent = append(w.sent, sentRequest{Host: req.URL.Host, Path: req.URL.Path, Auth: req.Header.Get("Authorization")})
	w.mu.Unlock()
	r := req.Clone(req.Context())
	if srv, ok := w.routes[req.URL.Host]; ok {
		r.URL.Scheme, r.URL.Host, r.Host = "http", srv.Listener.Addr().String(), req.URL.Host
	} else if !strings.HasPrefix(req.URL.Host, "127.0.0.1:") {
		return nil, fmt.Errorf("no route to host %s", req.URL.Host)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (w *world) requests() []sentRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]sentRequest(nil), w.sent...)
}

// foreignServer is a server that is not GitHub (GitLab, a mirror): it records
// every Authorization header that reaches it and answers like an API that
// does not know the path.
type foreignServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
	hits  int
}

func newForeignServer(t *testing.T) *foreignServer {
	fs := &foreignServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		fs.hits++
		if a := r.Header.Get("Authorization"); a != "" {
			fs.auths = append(fs.auths, a)
		}
		fs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *foreignServer) seen() (int, []string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.hits, append([]string(nil), fs.auths...)
}

// TestTokenGoesOnlyToItsHost runs the commands against github.com, a GitHub
// Enterprise Server and a foreign host (GitLab, a mirror) reached by name, and
// checks which Authorization header each host receives: the github.com token
// only api.github.com, the Enterprise token only the Enterprise host, and no
// header ever at the foreign host or the artifact blob store.
func TestTokenGoesOnlyToItsHost(t *testing.T) {
	const (
		dotcomToken = "ghp_DOTCOMtoken0123456789abcdefghijklmn"
		entToken    = "ghe_ENTERPRISEtoken0123456789abcdefghij"
		foreign     = "gitlab.example"
		ghes        = "ghe.corp.example"
		blobHost    = "productionresultssa0.blob.core.windows.net"
	)
	type cmdFn = func(*Env) *testCmd
	tests := []struct {
		name     string
		env      map[string]string
		remote   string
		cmd      cmdFn
		args     []string // RUN is replaced by the run id
		fault    func(dotcom *ghtest.Server)
		wantErr  string // "" for success
		wantAuth map[string]string
	}{
		{name: "https GitLab origin is refused before any request", env: map[string]string{EnvGHToken: dotcomToken},
			remote: "https://" + foreign + "/acme/kernels.git", cmd: watchCmd, args: []string{"RUN"},
			wantErr: "is on gitlab.example, which is not github.com"},
		{name: "ssh GitLab origin, download", env: map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken},
			remote: "git@" + foreign + ":acme/kernels.git", cmd: downloadCmd, args: []string{"RUN", "-D", "DIR"},
			wantErr: "is on gitlab.example, which is not github.com"},
		{name: "GitLab origin, dispatch", env: map[string]string{EnvGHToken: dotcomToken},
			remote: "ssh://git@" + foreign + ":2222/acme/kernels.git", cmd: dispatchCmd,
			wantErr: "is on gitlab.example, which is not github.com"},
		{name: "-R on a foreign host does not get GH_TOKEN", env: map[string]string{EnvGHToken: dotcomToken, EnvGitHubToken: dotcomToken},
			remote: "https://github.com/acme/kernels", cmd: watchCmd, args: []string{"RUN", "-R", foreign + "/acme/kernels"},
			wantErr: "set GH_ENTERPRISE_TOKEN"},
		{name: "a run URL on a foreign host is refused, whatever the tokens", env: map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken},
			remote: "https://github.com/acme/kernels", cmd: downloadCmd, args: []string{"https://" + foreign + "/acme/kernels/actions/runs/5", "-D", "DIR"},
			wantErr: "the run URL is on gitlab.example, which is neither github.com nor the configured host"},
		{name: "a run URL on the configured Enterprise host", env: map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken, EnvGHHost: ghes},
			remote: "https://github.com/acme/kernels", cmd: watchCmd, args: []string{"https://" + ghes + "/acme/kernels/actions/runs/RUN"},
			wantAuth: map[string]string{ghes: "Bearer " + entToken}},
		{name: "GH_HOST naming a host gives it the Enterprise token, never GH_TOKEN",
			env:    map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken, EnvGHHost: foreign},
			remote: "git@" + foreign + ":acme/kernels.git", cmd: watchCmd, args: []string{"RUN"},
			wantErr: "GitHub answered 404", wantAuth: map[string]string{foreign: "Bearer " + entToken}},
		{name: "github.com: GH_TOKEN to api.github.com, nothing to the blob store",
			env:    map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken},
			remote: "https://github.com/acme/kernels.git", cmd: downloadCmd, args: []string{"RUN", "-D", "DIR"},
			wantAuth: map[string]string{"api.github.com": "Bearer " + dotcomToken, blobHost: ""}},
		{name: "Enterprise Server: its token to it, nothing to the blob store",
			env:    map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken, EnvGHHost: ghes},
			remote: "git@" + ghes + ":acme/kernels.git", cmd: downloadCmd, args: []string{"RUN", "-D", "DIR"},
			wantAuth: map[string]string{ghes: "Bearer " + entToken, blobHost: ""}},
		{name: "-R github.com while GITHUB_API_URL serves an Enterprise Server is refused before any request",
			env:    map[string]string{EnvGHToken: dotcomToken, EnvAPIURL: "https://" + ghes + "/api/v3/"},
			remote: "https://github.com/acme/kernels", cmd: watchCmd, args: []string{"RUN", "-R", "github.com/acme/kernels"},
			wantErr: "the repository is on github.com, but GITHUB_API_URL=https://ghe.corp.example/… sends every request to ghe.corp.example"},
		{name: "a github.com run URL while GITHUB_API_URL serves an Enterprise Server is refused",
			env:    map[string]string{EnvGHToken: dotcomToken, EnvAPIURL: "https://" + ghes + "/api/v3/"},
			remote: "https://github.com/acme/kernels", cmd: downloadCmd, args: []string{"https://github.com/acme/kernels/actions/runs/RUN", "-D", "DIR"},
			wantErr: "sends every request to ghe.corp.example"},
		{name: "GH_HOST naming another host than GITHUB_API_URL is refused",
			env:    map[string]string{EnvGHEnterpriseToken: entToken, EnvGHHost: ghes, EnvAPIURL: "https://api.github.com/"},
			remote: "git@" + ghes + ":acme/kernels.git", cmd: watchCmd, args: []string{"RUN", "-R", "acme/kernels"},
			wantErr: "the repository is on ghe.corp.example, but GITHUB_API_URL=https://api.github.com/ sends every request to github.com"},
		{name: "GH_HOST naming another host than GITHUB_API_URL is refused, origin on GH_HOST",
			env:    map[string]string{EnvGHEnterpriseToken: entToken, EnvGHHost: ghes, EnvAPIURL: "https://api.github.com/"},
			remote: "git@" + ghes + ":acme/kernels.git", cmd: downloadCmd, args: []string{"RUN", "-D", "DIR"},
			wantErr: "sends every request to github.com"},
		{name: "an Enterprise Server's Actions runner: GITHUB_API_URL and its GITHUB_TOKEN, -R OWNER/REPO",
			env:    map[string]string{EnvGitHubToken: entToken, EnvAPIURL: "https://" + ghes + "/api/v3"},
			remote: "https://github.com/acme/kernels", cmd: watchCmd, args: []string{"RUN", "-R", "acme/kernels"},
			wantAuth: map[string]string{ghes: "Bearer " + entToken}},
		// A host spelled with capitals is still github.com: it gets GH_TOKEN at
		// api.github.com, never the Enterprise token; a trailing dot is refused
		// before any request is made.
		{name: "-R GitHub.COM (capitals) is github.com", env: map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken},
			remote: "https://github.com/acme/kernels", cmd: watchCmd, args: []string{"RUN", "-R", "GitHub.COM/acme/kernels"},
			wantAuth: map[string]string{"api.github.com": "Bearer " + dotcomToken}},
		{name: "-R github.com. (trailing dot) is refused before any request", env: map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken},
			remote: "https://github.com/acme/kernels", cmd: watchCmd, args: []string{"RUN", "-R", "github.com./acme/kernels"},
			wantErr: `"github.com." is not a host name`},
		{name: "GH_HOST=GitHub.com. is refused before any request", env: map[string]string{EnvGHToken: dotcomToken, EnvGHEnterpriseToken: entToken, EnvGHHost: "GitHub.com."},
			remote: "https://github.com/acme/kernels", cmd: watchCmd, args: []string{"RUN", "-R", "acme/kernels"},
			wantErr: `GH_HOST="GitHub.com." is not a host name`},
		{name: "an API redirect to a foreign host carries no token",
			env:    map[string]string{EnvGHToken: dotcomToken},
			remote: "https://github.com/acme/kernels.git", cmd: watchCmd, args: []string{"RUN"},
			fault: func(s *ghtest.Server) {
				s.Fail(ghtest.Fault{Path: "/actions/runs/", Status: http.StatusTemporaryRedirect,
					Header: map[string]string{"Location": "https://" + foreign + "/repos/acme/kernels/actions/runs/1"}})
			},
			wantErr: "GitHub answered 404", wantAuth: map[string]string{"api.github.com": "Bearer " + dotcomToken, foreign: ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dotcom := ghtest.New(t, "acme", "kernels", dotcomToken)
			enterprise := ghtest.New(t, "acme", "kernels", entToken)
			hostile := newForeignServer(t)
			var runID int64
			for _, s := range []*ghtest.Server{dotcom, enterprise} {
				s.BlobBase = "https://" + blobHost
				s.AddWorkflow(ghtest.Workflow{File: wfFile, Name: "Debug", Inputs: inputNames(testWorkflow())})
				runID = s.AddRun(ghtestRun(wfFile, "main"))
				s.AddArtifact(runID, ghtest.ArtifactFile{Name: "evidence", Zip: evidenceZip(t, 1)})
			}
			if tt.fault != nil {
				tt.fault(dotcom)
			}
			w := &world{routes: map[string]*httptest.Server{
				"api.github.com": dotcom.API, ghes: enterprise.API, foreign: hostile.Server, blobHost: dotcom.BlobSrv,
			}}
			if strings.Contains(tt.name, "Enterprise Server") {
				w.routes[blobHost] = enterprise.BlobSrv
			}
			var out, errOut bytes.Buffer
			f := &Env{
				Workflow:   func() (Workflow, error) { return testWorkflow(), nil },
				Report:     fakeReport,
				Getenv:     func(k string) string { return tt.env[k] },
				HTTPClient: &http.Client{Transport: w},
				Stdout:     &out,
				Stderr:     &errOut,
				GitRemote:  func(context.Context) (string, error) { return tt.remote, nil },
				GitBranch:  func(context.Context) (string, error) { return "main", nil },
				Sleep:      (&sleeper{}).Sleep,
				Now:        func() time.Time { return fixedNow },
			}
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				switch a {
				case "DIR":
					args[i] = filepath.Join(t.TempDir(), "out")
				default:
					args[i] = strings.ReplaceAll(a, "RUN", itoa64(runID))
				}
			}
			cmd := tt.cmd(f)
			cmd.SetArgs(args)
			err := cmd.ExecuteContext(context.Background())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v\nstderr: %s", err, errOut.String())
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}

			hits, auths := hostile.seen()
			if len(auths) > 0 && tt.wantAuth[foreign] == "" {
				t.Errorf("the foreign host received Authorization headers %q", auths)
			}
			for _, a := range auths {
				if a != tt.wantAuth[foreign] {
					t.Errorf("the foreign host received %q", a)
				}
			}
			if _, expected := tt.wantAuth[foreign]; !expected && hits > 0 {
				t.Errorf("the foreign host received %d requests", hits)
			}
			reached := map[string]bool{}
			for _, r := range w.requests() {
				reached[r.Host] = true
				want, listed := tt.wantAuth[r.Host]
				if !listed && !strings.HasPrefix(r.Host, "127.0.0.1:") {
					t.Errorf("request to unexpected host %s%s", r.Host, r.Path)
				}
				if r.Auth != want && listed {
					t.Errorf("%s%s got Authorization %q, want %q", r.Host, r.Path, r.Auth, want)
				}
			}
			for host := range tt.wantAuth {
				if !reached[host] {
					t.Errorf("no request reached %s", host)
				}
			}
			all := out.String() + errOut.String() + fmt.Sprint(err)
			if strings.Contains(all, dotcomToken) || strings.Contains(all, entToken) {
				t.Errorf("a token was printed:\n%s", all)
			}
		})
	}
}

// writeFakeGH writes a gh stand-in into a new folder and returns the folder.
// It logs its arguments to $FAKE_GH_LOG and behaves like `gh auth token`:
// the token for github.com, "no oauth token" (exit 1) for any other host.
func writeFakeGH(t *testing.T, token string) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "args.log")
	script := `#!/bin/sh
printf '%s\n' "$*" >> "$FAKE_GH_LOG"
case "$*" in
"auth token --hostname github.com") printf '%s\n' "` + token + `" ;;
"auth token --hostname "*) echo "no oauth token found for $4" >&2; exit 1 ;;
*) echo "unknown command $*" >&2; exit 2 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_GH_LOG", log)
	return dir, log
}

func readLog(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

func TestGHCLIToken(t *testing.T) {
	const ghToken = "gho_FROMghCLI0123456789abcdefghijklmnop"
	ghDir, log := writeFakeGH(t, ghToken)
	ctx := context.Background()

	t.Run("gh on PATH", func(t *testing.T) {
		t.Setenv("PATH", ghDir)
		got, err := GHCLI{}.Token(ctx, "github.com")
		if err != nil || got != ghToken {
			t.Fatalf("Token = %q, %v", got, err)
		}
		if l := readLog(t, log); !strings.Contains(l, "auth token --hostname github.com\n") {
			t.Errorf("gh was run with %q", l)
		}
	})
	t.Run("gh without a token for the host", func(t *testing.T) {
		t.Setenv("PATH", ghDir)
		_, err := GHCLI{}.Token(ctx, "ghe.corp.example")
		if err == nil || !strings.Contains(err.Error(), "no oauth token found for ghe.corp.example") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no gh installed", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		got, err := GHCLI{}.Token(ctx, "github.com")
		if got != "" || err != nil {
			t.Fatalf("Token = %q, %v; want nothing and no error", got, err)
		}
	})
	t.Run("GH_PATH names gh", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		env := map[string]string{EnvGHPath: filepath.Join(ghDir, "gh")}
		got, err := GHCLI{Getenv: func(k string) string { return env[k] }}.Token(ctx, "github.com")
		if err != nil || got != ghToken {
			t.Fatalf("Token = %q, %v", got, err)
		}
	})
	for _, bad := range []struct{ name, body, want string }{
		{"not a token", `echo "two words"`, "not a token"},
		{"nothing", `true`, "printed nothing"},
		{"too much", `head -c 100000 /dev/zero | tr '\0' a`, "more than 4096 bytes"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "gh"), []byte("#!/bin/sh\n"+bad.body+"\n"), 0o755)
			env := map[string]string{EnvGHPath: filepath.Join(dir, "gh")}
			got, err := GHCLI{Getenv: func(k string) string { return env[k] }}.Token(ctx, "github.com")
			if err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Fatalf("Token = %d bytes, %v; want an error with %q", len(got), err, bad.want)
			}
		})
	}
	t.Run("a gh that hangs is stopped with the context", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "gh"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755)
		env := map[string]string{EnvGHPath: filepath.Join(dir, "gh")}
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := GHCLI{Getenv: func(k string) string { return env[k] }}.Token(ctx, "github.com")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %s", d)
		}
	})
}

// TestCommandsFallBackToGH runs the commands with no token in the
// environment: the token comes from the fake gh on PATH, asked for the right
// host, and is never printed.
func TestCommandsFallBackToGH(t *testing.T) {
	const ghToken = "gho_FROMghCLI0123456789abcdefghijklmnop"
	ghDir, log := writeFakeGH(t, ghToken)
	t.Setenv("PATH", ghDir)

	srv := ghtest.New(t, "acme", "kernels", ghToken)
	srv.AddWorkflow(ghtest.Workflow{File: wfFile, Name: "Debug", Inputs: inputNames(testWorkflow())})
	id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "echoed " + ghToken,
		Frames: ghtest.DefaultFrames(fixedNow, "success")})
	h := newHarness(t, srv)
	delete(h.env, EnvGHToken)
	delete(h.env, EnvAPIURL)
	h.f.TokenFromGH = GHCLI{Getenv: h.f.getenv}.Token
	w := &world{routes: map[string]*httptest.Server{"api.github.com": srv.API}}
	h.f.HTTPClient = &http.Client{Transport: w}

	if err := h.run(watchCmd, itoa64(id), "-i", "1s"); err != nil {
		t.Fatalf("watch: %v\n%s", err, h.err.String())
	}
	if l := readLog(t, log); l != "auth token --hostname github.com\n" {
		t.Errorf("gh was run as %q", l)
	}
	all := h.out.String() + h.err.String()
	if strings.Contains(all, ghToken) || !strings.Contains(all, "echoed ***") {
		t.Errorf("the token from gh was not masked:\n%s", all)
	}

	// For an Enterprise host gh is asked about that host, and its refusal is explained.
	h2 := newHarness(t, srv)
	h2.env = map[string]string{EnvGHToken: ghToken, EnvGHHost: "ghe.corp.example"}
	h2.f.TokenFromGH = GHCLI{Getenv: h2.f.getenv}.Token
	h2.f.HTTPClient = &http.Client{Transport: w}
	h2.f.GitRemote = func(context.Context) (string, error) { return "git@ghe.corp.example:acme/kernels.git", nil }
	err := h2.run(watchCmd, "5")
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "no oauth token found for ghe.corp.example") ||
		!strings.Contains(err.Error(), "gh auth login --hostname ghe.corp.example") {
		t.Fatalf("err = %v", err)
	}
	if l := readLog(t, log); !strings.HasSuffix(l, "auth token --hostname ghe.corp.example\n") {
		t.Errorf("gh was run as %q", l)
	}
}

// TestSecretsInURLsAndShortTokensNeverPrinted covers the credentials that
// are not the token itself: in -R, GH_HOST and GITHUB_API_URL's path and
// query, through network errors and retry lines; and a token so short that
// masking every occurrence would garble the output.
func TestSecretsInURLsAndShortTokensNeverPrinted(t *testing.T) {
	const secret = "hunter2SECRETvalue"
	t.Run("secret path and query in GITHUB_API_URL", func(t *testing.T) {
		srv := newServer(t)
		h := newHarness(t, srv)
		// A dead port: every attempt fails with a network error naming the URL.
		h.env[EnvAPIURL] = "http://127.0.0.1:1/" + secret + "/api/v3?key=" + secret + "q"
		err := h.run(watchCmd, "5", "-R", "acme/kernels")
		all := h.out.String() + h.err.String() + fmt.Sprint(err)
		if err == nil || !strings.Contains(all, "connection refused") {
			t.Fatalf("err = %v\n%s", err, all)
		}
		if strings.Contains(all, secret) {
			t.Errorf("the API URL's secret was printed:\n%s", all)
		}
		if !strings.Contains(h.err.String(), "retrying") {
			t.Errorf("no retry line to check:\n%s", h.err.String())
		}
	})
	t.Run("bad GITHUB_API_URL", func(t *testing.T) {
		srv := newServer(t)
		h := newHarness(t, srv)
		h.env[EnvAPIURL] = "https://u:" + secret + "@proxy.example.com/" + secret
		err := h.run(watchCmd, "5", "-R", "acme/kernels")
		if ExitCode(err) != ExitUsage || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "must not carry credentials") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("credentials in -R are dropped", func(t *testing.T) {
		srv := newServer(t)
		id := srv.AddRun(ghtestRun(wfFile, "main"))
		h := newHarness(t, srv)
		if err := h.run(watchCmd, itoa64(id), "-R", "https://x-access-token:"+secret+"@github.com/acme/kernels.git"); err != nil {
			t.Fatal(err)
		}
		bad := newHarness(t, srv)
		err := bad.run(watchCmd, "5", "-R", "https://x-access-token:"+secret+"@github.com/acme")
		if ExitCode(err) != ExitUsage || strings.Contains(err.Error(), secret) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("credentials in GH_HOST", func(t *testing.T) {
		srv := newServer(t)
		h := newHarness(t, srv)
		h.env[EnvGHHost] = "u:" + secret + "@ghe.corp.example"
		err := h.run(watchCmd, "5")
		if ExitCode(err) != ExitUsage || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "***@ghe.corp.example") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a one-letter token does not garble the output", func(t *testing.T) {
		srv := ghtest.New(t, "acme", "kernels", "x")
		srv.AddWorkflow(ghtest.Workflow{File: wfFile, Name: "Debug"})
		id := srv.AddRun(ghtest.Run{WorkflowFile: wfFile, Branch: "main", DisplayTitle: "fix flux x",
			Frames: ghtest.DefaultFrames(fixedNow, "success")})
		h := newHarness(t, srv)
		h.env[EnvGHToken] = "x"
		if err := h.run(watchCmd, itoa64(id), "-R", "acme/kernels"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(h.out.String(), "fix flux ***") {
			t.Errorf("want the title's words intact and the lone x masked:\n%s", h.out.String())
		}
	})
}

// TestAuthTransport checks the guard on its own: the token only for the
// API's scheme and host, and an Authorization header set by anyone else
// removed on the way to another host.
func TestAuthTransport(t *testing.T) {
	var got []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.URL.String()+" "+r.Header.Get("Authorization"))
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	api, _ := parseAPIURL("https://GHE.example.com:443/api/v3")
	rt := newAuthTransport(base, api, "tok")
	for _, u := range []string{"https://ghe.example.com/api/v3/x", "https://ghe.example.com:443/y", "http://ghe.example.com/z",
		"https://ghe.example.com:8443/w", "https://evil.example/v"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer planted")
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if req.Header.Get("Authorization") != "Bearer planted" {
			t.Error("the caller's request was modified")
		}
	}
	want := []string{"https://ghe.example.com/api/v3/x Bearer tok", "https://ghe.example.com:443/y Bearer tok",
		"http://ghe.example.com/z ", "https://ghe.example.com:8443/w ", "https://evil.example/v "}
	b, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(b) != string(w) {
		t.Errorf("sent:\n%s\nwant:\n%s", b, w)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzRedact: a long secret never survives masking, a short one never
// survives as a whole word, and text without secrets is unchanged.
func FuzzRedact(f *testing.F) {
	f.Add("Bearer ghp_LONGtoken0123456789abcdefghijkl.", "ghp_LONGtoken0123456789abcdefghijkl")
	f.Add("exit x x-ray", "x")
	f.Add("aaaa", "aa")
	f.Fuzz(func(t *testing.T, s, secret string) {
		if secret == "" || strings.Contains(secret, "*") {
			return
		}
		got := redact(s, []string{secret})
		if !strings.Contains(asciiLower(s), asciiLower(secret)) && got != s {
			t.Fatalf("redact(%q, %q) = %q: changed text without the secret", s, secret, got)
		}
		if len(secret) >= longSecret && strings.Contains(asciiLower(got), asciiLower(secret)) {
			t.Fatalf("redact(%q, %q) = %q still holds the secret", s, secret, got)
		}
		if len(secret) < longSecret && redactOne(got, secret, true) != got {
			t.Fatalf("redact(%q, %q) = %q still holds the secret as a word", s, secret, got)
		}
	})
}

// FuzzParseRepoHidesCredentials: whatever follows user:SECRET@, the secret is
// in no error and in no part of the repository.
func FuzzParseRepoHidesCredentials(f *testing.F) {
	for _, s := range []string{"github.com/a/b", "ghe.example.com/acme/..", "github.com:a/b", "https://github.com/a", "h:1/a/b", "", "/", "@x"} {
		f.Add(s)
	}
	const secret = "s3cretVALUEzz"
	f.Fuzz(func(t *testing.T, rest string) {
		for _, in := range []string{"u:" + secret + "@" + rest, "https://u:" + secret + "@" + rest, "ssh://" + secret + "@" + rest} {
			r, err := ParseRepo(in)
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Fatalf("ParseRepo(%q) error shows the secret: %v", in, err)
			}
			if err == nil && strings.Contains(r.Host+r.Owner+r.Name, secret) {
				t.Fatalf("ParseRepo(%q) = %+v keeps the secret", in, r)
			}
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	line := strings.Repeat("watch: job debug (T4) step 3 Run reproducer in_progress 12s ", 4) + "\n"
	secrets := []string{"ghp_LONGtoken0123456789abcdefghijkl", "x", "k3y"}
	for b.Loop() {
		redact(line, secrets)
	}
}

// TestHostClassification checks that the spelling of a host does not change
// which token it gets: capitals and one trailing dot (the DNS root) still
// name github.com, a *.ghe.com tenancy or github.localhost, never an
// Enterprise Server that would be sent GH_ENTERPRISE_TOKEN.
func TestHostClassification(t *testing.T) {
	tests := []struct {
		host       string
		normal     string
		enterprise bool
	}{
		{"github.com", "github.com", false},
		{"GitHub.COM", "github.com", false},
		{"github.com.", "github.com", false},
		{"GITHUB.COM.", "github.com", false},
		{"github.com.:443", "github.com", false},
		{"api.github.com.", "github.com", false},
		{"octo.ghe.com.", "octo.ghe.com", false},
		{"Octo.GHE.com", "octo.ghe.com", false},
		{"github.localhost.", "github.localhost", false},
		{"ghe.corp.example.", "ghe.corp.example", true},
		{"GHE.corp.example", "ghe.corp.example", true},
	}
	const dotcom, ent = "dotcom-token", "enterprise-token"
	env := map[string]string{EnvGHToken: dotcom, EnvGHEnterpriseToken: ent}
	for _, tt := range tests {
		if got := NormalizeHost(tt.host); got != tt.normal {
			t.Errorf("NormalizeHost(%q) = %q, want %q", tt.host, got, tt.normal)
		}
		if got := IsEnterprise(tt.host); got != tt.enterprise {
			t.Errorf("IsEnterprise(%q) = %v, want %v", tt.host, got, tt.enterprise)
		}
		tok, from, err := chooseToken(context.Background(), endpoint{host: tt.host}, func(k string) string { return env[k] }, nil)
		want, wantFrom := dotcom, EnvGHToken
		if tt.enterprise {
			want, wantFrom = ent, EnvGHEnterpriseToken
		}
		if err != nil || tok != want || from != wantFrom {
			t.Errorf("chooseToken(%q) = %q from %s, %v; want %q from %s", tt.host, tok, from, err, want, wantFrom)
		}
	}
}
