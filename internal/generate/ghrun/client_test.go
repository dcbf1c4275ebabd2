package ghrun

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestAPIBaseURL(t *testing.T) {
	tests := []struct {
		host, apiURL string
		want         string
		wantErr      string
	}{
		{want: "https://api.github.com/"},
		{host: "github.com", want: "https://api.github.com/"},
		{host: "GitHub.com", want: "https://api.github.com/"},
		{host: "ghe.example.com", want: "https://ghe.example.com/api/v3/"},
		{host: "ghe.example.com:8443", want: "https://ghe.example.com:8443/api/v3/"},
		{host: "octo.ghe.com", want: "https://api.octo.ghe.com/"},
		{host: "ghe.example.com", apiURL: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080/"},
		{host: "api.github.com", want: "https://api.github.com/"},
		{host: "github.com:443", want: "https://api.github.com/"},
		{host: "github.localhost", want: "https://api.github.localhost/"},
		{host: "x.github.localhost", want: "https://api.github.localhost/"},
		{apiURL: "http://[::1]:8080/api/v3", want: "http://[::1]:8080/api/v3/"},
		{apiURL: "http://127.0.0.2/", want: "http://127.0.0.2/"},
		{apiURL: "http://localhost:8080/api/v3", wantErr: "not a literal loopback address"},
		{apiURL: "http://api.github.localhost/", wantErr: "not a literal loopback address"},
		{apiURL: "http://127.0.0.1.nip.io/", wantErr: "not a literal loopback address"},
		{apiURL: "http://ghe.example.com/api/v3", wantErr: "plain http to a host that is not a literal loopback address"},
		{host: "u:" + testToken + "@ghe.example.com", wantErr: `host "***@ghe.example.com" is not a host name`},
		{apiURL: "ftp://proxy.example.com/" + testToken + "/api/v3?key=" + testToken, wantErr: "GITHUB_API_URL=ftp://proxy.example.com/… is not an http(s) URL"},
		{apiURL: "https://ghe.example.com/api/v3", want: "https://ghe.example.com/api/v3/"},
		{apiURL: "https://api.github.com", want: "https://api.github.com/"},
		{host: "https://ghe.example.com/", wantErr: "is not a host name"},
		{apiURL: "ghe.example.com/api/v3", wantErr: "is not an http(s) URL"},
		{apiURL: "ftp://ghe.example.com", wantErr: "is not an http(s) URL"},
		{apiURL: "https://user:" + testToken + "@ghe.example.com/api/v3", wantErr: "must not carry credentials"},
	}
	for _, tt := range tests {
		got, err := APIBaseURL(tt.host, tt.apiURL)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("APIBaseURL(%q, %q) error = %v, want %q", tt.host, tt.apiURL, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testToken) {
				t.Errorf("token leaked: %v", err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("APIBaseURL(%q, %q) = %q, %v; want %q", tt.host, tt.apiURL, got, err, tt.want)
		}
	}
}

func TestNewClientEnvironment(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	tests := []struct {
		name      string
		opts      ClientOptions
		env       map[string]string
		wantToken string
		wantBase  string
		wantErr   error
	}{
		{name: "GH_TOKEN first", env: map[string]string{EnvGHToken: "a", EnvGitHubToken: "b"}, wantToken: "a", wantBase: "https://api.github.com/"},
		{name: "GITHUB_TOKEN second", env: map[string]string{EnvGitHubToken: "b"}, wantToken: "b", wantBase: "https://api.github.com/"},
		{name: "explicit token wins", opts: ClientOptions{Token: "c"}, env: map[string]string{EnvGHToken: "a"}, wantToken: "c", wantBase: "https://api.github.com/"},
		{name: "blank token is missing", env: map[string]string{EnvGHToken: "  "}, wantErr: ErrNoToken},
		{name: "no token", env: map[string]string{}, wantErr: ErrNoToken},
		{name: "GH_HOST selects GHES and its token", env: map[string]string{EnvGHToken: "a", EnvGHEnterpriseToken: "e", EnvGHHost: "ghe.example.com"}, wantToken: "e", wantBase: "https://ghe.example.com/api/v3/"},
		{name: "GITHUB_ENTERPRISE_TOKEN second", env: map[string]string{EnvGitHubEnterpriseToken: "f", EnvGHHost: "ghe.example.com"}, wantToken: "f", wantBase: "https://ghe.example.com/api/v3/"},
		{name: "GH_TOKEN never goes to GHES", env: map[string]string{EnvGHToken: "a", EnvGitHubToken: "b", EnvGHHost: "ghe.example.com"}, wantErr: ErrNoToken},
		{name: "enterprise token never goes to github.com", env: map[string]string{EnvGHEnterpriseToken: "e"}, wantErr: ErrNoToken},
		{name: "Host option over GH_HOST", opts: ClientOptions{Host: "other.example.com"}, env: map[string]string{EnvGHEnterpriseToken: "e", EnvGHHost: "ghe.example.com"}, wantToken: "e", wantBase: "https://other.example.com/api/v3/"},
		{name: "GHE.com tenancy takes GH_TOKEN", env: map[string]string{EnvGHToken: "a", EnvGHEnterpriseToken: "e", EnvGHHost: "octo.ghe.com"}, wantToken: "a", wantBase: "https://api.octo.ghe.com/"},
		{name: "explicit GITHUB_API_URL takes GH_TOKEN", env: map[string]string{EnvGHToken: "a", EnvGHEnterpriseToken: "e", EnvAPIURL: "https://ghe.example.com/api/v3"}, wantToken: "a", wantBase: "https://ghe.example.com/api/v3/"},
		{name: "explicit GHES GITHUB_API_URL falls back to the enterprise token", env: map[string]string{EnvGHEnterpriseToken: "e", EnvAPIURL: "https://ghe.example.com/api/v3"}, wantToken: "e", wantBase: "https://ghe.example.com/api/v3/"},
		{name: "gh is asked last", opts: ClientOptions{TokenFromGH: func(_ context.Context, host string) (string, error) { return "from-gh-for-" + host, nil }},
			env: map[string]string{EnvGHEnterpriseToken: "e"}, wantToken: "from-gh-for-github.com", wantBase: "https://api.github.com/"},
		{name: "gh is not asked when the environment has the token", opts: ClientOptions{TokenFromGH: func(context.Context, string) (string, error) { return "", errors.New("asked") }},
			env: map[string]string{EnvGHToken: "a"}, wantToken: "a", wantBase: "https://api.github.com/"},
		{name: "gh is asked for the Enterprise host", opts: ClientOptions{TokenFromGH: func(_ context.Context, host string) (string, error) { return "from-gh-for-" + host, nil }},
			env: map[string]string{EnvGHToken: "a", EnvGHHost: "ghe.example.com"}, wantToken: "from-gh-for-ghe.example.com", wantBase: "https://ghe.example.com/api/v3/"},
		{name: "gh has none", opts: ClientOptions{TokenFromGH: func(context.Context, string) (string, error) { return "", nil }}, wantErr: ErrNoToken},
		{name: "GITHUB_API_URL overrides both", opts: ClientOptions{Host: "other.example.com"},
			env: map[string]string{EnvGHToken: "a", EnvGHHost: "ghe.example.com", EnvAPIURL: "http://127.0.0.1:9999/api/v3"}, wantToken: "a", wantBase: "http://127.0.0.1:9999/api/v3/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Getenv = env(tt.env)
			c, err := NewClient(tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.token != tt.wantToken || c.BaseURL() != tt.wantBase {
				t.Errorf("token %q base %q, want %q %q", c.token, c.BaseURL(), tt.wantToken, tt.wantBase)
			}
		})
	}
}

func TestNoTokenErrorSaysWhatToDo(t *testing.T) {
	noGH := func(context.Context, string) (string, error) { return "", nil }
	ghFails := func(context.Context, string) (string, error) {
		return "", errors.New("exit status 1: no oauth token found for ghe.example.com")
	}
	tests := []struct {
		name string
		opts ClientOptions
		env  map[string]string
		want []string
	}{
		{name: "github.com", opts: ClientOptions{TokenFromGH: noGH},
			want: []string{"no GitHub token for github.com", "set GH_TOKEN (or GITHUB_TOKEN)", "actions: write", "actions: read",
				"install gh and log in with `gh auth login --hostname github.com`"}},
		{name: "GHES with only GH_TOKEN", opts: ClientOptions{TokenFromGH: ghFails}, env: map[string]string{EnvGHToken: testToken, EnvGHHost: "ghe.example.com"},
			want: []string{"no GitHub token for ghe.example.com", "set GH_ENTERPRISE_TOKEN (or GITHUB_ENTERPRISE_TOKEN)",
				"GH_TOKEN and GITHUB_TOKEN are only sent to github.com", "no oauth token found for ghe.example.com",
				"`gh auth login --hostname ghe.example.com`"}},
		{name: "explicit API URL", env: map[string]string{EnvAPIURL: "http://127.0.0.1:9/"},
			want: []string{"no GitHub token for the API at GITHUB_API_URL (127.0.0.1:9)", "set GH_TOKEN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Getenv = func(k string) string { return tt.env[k] }
			_, err := NewClient(tt.opts)
			if !errors.Is(err, ErrNoToken) {
				t.Fatalf("err = %v, want ErrNoToken", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("token in %v", err)
			}
		})
	}
}

// TestGHESLayout talks to a server mounted under /api/v3/, as GitHub Enterprise Server is.
func TestGHESLayout(t *testing.T) {
	srv := newServer(t)
	runID := srv.AddRun(ghtestRun(wfFile, "main"))
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: srv.API.URL + "/api/v3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LatestRun(context.Background(), testRepo, wfFile, ""); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || reqs[0].Path != "/repos/acme/kernels/actions/workflows/"+wfFile+"/runs" {
		t.Fatalf("requests = %+v", reqs)
	}
	_ = runID
}

func TestRedactErrKeepsChain(t *testing.T) {
	base := context.Canceled
	err := redactErr(&ExitError{Code: 7, Err: errors.Join(errors.New("bad "+testToken), base)}, testToken)
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("token in %q", err)
	}
	if !errors.Is(err, context.Canceled) || ExitCode(err) != 7 {
		t.Fatalf("chain lost: %v code %d", err, ExitCode(err))
	}
}
