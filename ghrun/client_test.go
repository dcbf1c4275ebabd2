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
		{name: "GH_HOST selects GHES", env: map[string]string{EnvGHToken: "a", EnvGHHost: "ghe.example.com"}, wantToken: "a", wantBase: "https://ghe.example.com/api/v3/"},
		{name: "Host option over GH_HOST", opts: ClientOptions{Host: "other.example.com"}, env: map[string]string{EnvGHToken: "a", EnvGHHost: "ghe.example.com"}, wantToken: "a", wantBase: "https://other.example.com/api/v3/"},
		{name: "GITHUB_API_URL overrides both", opts: ClientOptions{Host: "other.example.com"},
			env: map[string]string{EnvGHToken: "a", EnvGHHost: "ghe.example.com", EnvAPIURL: "http://localhost:9999/api/v3"}, wantToken: "a", wantBase: "http://localhost:9999/api/v3/"},
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
	for _, want := range []string{"GH_TOKEN", "GITHUB_TOKEN", "actions: write", "gh auth token"} {
		if !strings.Contains(ErrNoToken.Error(), want) {
			t.Errorf("ErrNoToken does not mention %q", want)
		}
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
