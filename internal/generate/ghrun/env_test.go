package ghrun

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.MinimizeBriefly()
	os.Exit(m.Run())
}

func TestResolveRepoAndHost(t *testing.T) {
	tests := []struct {
		name       string
		flags      RepoFlags
		remote     string
		ghHost     string
		apiURL     string
		wantRepo   string
		wantHost   string
		wantAPIURL string
		wantErr    []string
	}{
		{name: "remote on github.com", remote: "https://github.com/acme/kernels.git", wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "remote on www.github.com", remote: "https://WWW.GitHub.com/acme/kernels.git", wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "remote on GHES named by GH_HOST", remote: "git@ghe.corp.example:gpu/kernels.git", ghHost: "GHE.corp.example", wantRepo: "ghe.corp.example/gpu/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "GH_HOST keeps its port over an ssh remote", remote: "ssh://git@ghe.corp.example:2222/gpu/kernels.git", ghHost: "ghe.corp.example:8443", wantRepo: "ghe.corp.example:8443/gpu/kernels", wantHost: "ghe.corp.example:8443", wantAPIURL: "https://ghe.corp.example:8443/api/v3/"},
		{name: "remote on GHES named by --hostname", flags: RepoFlags{Hostname: "ghe.corp.example"}, remote: "https://ghe.corp.example/gpu/kernels", wantRepo: "ghe.corp.example/gpu/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "remote on the host of GITHUB_API_URL", remote: "https://ghe.corp.example/gpu/kernels", apiURL: "https://ghe.corp.example/api/v3", wantRepo: "ghe.corp.example/gpu/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R HOST/OWNER/REPO beats GH_HOST", flags: RepoFlags{Repo: "ghe.one.example/a/b"}, ghHost: "ghe.corp.example", wantRepo: "ghe.one.example/a/b", wantHost: "ghe.one.example", wantAPIURL: "https://ghe.one.example/api/v3/"},
		{name: "--hostname with -R OWNER/REPO", flags: RepoFlags{Repo: "a/b", Hostname: "GHE.two.example"}, ghHost: "x.example", wantRepo: "ghe.two.example/a/b", wantHost: "ghe.two.example", wantAPIURL: "https://ghe.two.example/api/v3/"},
		{name: "-R OWNER/REPO takes GH_HOST", flags: RepoFlags{Repo: "a/b"}, ghHost: "ghe.corp.example", wantRepo: "ghe.corp.example/a/b", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R without host and no GH_HOST is github.com", flags: RepoFlags{Repo: "a/b"}, remote: "git@gitlab.example:x/y.git", wantRepo: "a/b", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "-R as a URL with credentials", flags: RepoFlags{Repo: "https://u:hunter2secret@github.com/acme/kernels.git"}, wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "-R USER:TOKEN@HOST/OWNER/REPO", flags: RepoFlags{Repo: "u:hunter2secret@ghe.corp.example/acme/kernels"}, wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R as an scp-like remote", flags: RepoFlags{Repo: "git@github.com:acme/kernels.git"}, wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},

		{name: "GitLab origin is refused", remote: "https://gitlab.example/acme/kernels.git",
			wantErr: []string{"the origin remote (https://gitlab.example/acme/kernels.git) is on gitlab.example, which is not github.com",
				"set GH_HOST=gitlab.example", "GH_ENTERPRISE_TOKEN", "-R OWNER/REPO"}},
		{name: "ssh origin on another host is refused", remote: "git@mirror.example:acme/kernels.git",
			wantErr: []string{"is on mirror.example, which is not github.com"}},
		{name: "origin credentials are not shown", remote: "https://oauth2:hunter2secret@gitlab.example/acme/kernels.git",
			wantErr: []string{"https://***@gitlab.example/acme/kernels.git"}},
		{name: "origin not on GH_HOST", remote: "git@github.com:acme/kernels.git", ghHost: "ghe.corp.example",
			wantErr: []string{"the origin remote is on github.com, not on GH_HOST=ghe.corp.example", "-R ghe.corp.example/OWNER/REPO"}},
		{name: "-R host and --hostname disagree", flags: RepoFlags{Repo: "ghe.one.example/a/b", Hostname: "ghe.two.example"},
			wantErr: []string{"-R names host ghe.one.example but --hostname says ghe.two.example"}},
		{name: "GH_HOST with credentials", remote: "git@github.com:acme/kernels.git", ghHost: "u:hunter2secret@ghe.corp.example",
			wantErr: []string{`GH_HOST="***@ghe.corp.example" is not a host name`}},
		{name: "-R URL with credentials and a bad path", flags: RepoFlags{Repo: "https://u:hunter2secret@github.com/acme"},
			wantErr: []string{"https://***@github.com/acme", "expected a path OWNER/REPO"}},
		{name: "-R with credentials, no scheme and a bad name", flags: RepoFlags{Repo: "u:hunter2secret@ghe.corp.example/acme/.."},
			wantErr: []string{"***@ghe.corp.example", "not a valid repository name"}},

		// A repository a file recorded (the bisection state) is not one the user named: its
		// host must be github.com, the configured host or GITHUB_API_URL's.
		{name: "recorded OWNER/REPO", flags: RepoFlags{Recorded: "acme/kernels", RecordedIn: "bisect.json"}, remote: "https://gitlab.example/x/y", wantRepo: "acme/kernels", wantHost: "github.com", wantAPIURL: "https://api.github.com/"},
		{name: "recorded OWNER/REPO on GH_HOST", flags: RepoFlags{Recorded: "acme/kernels", RecordedIn: "bisect.json"}, ghHost: "ghe.corp.example", wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "recorded on GH_HOST", flags: RepoFlags{Recorded: "ghe.corp.example/acme/kernels", RecordedIn: "bisect.json"}, ghHost: "ghe.corp.example", wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "recorded on the host of GITHUB_API_URL", flags: RepoFlags{Recorded: "ghe.corp.example/acme/kernels", RecordedIn: "bisect.json"}, apiURL: "https://ghe.corp.example/api/v3", wantRepo: "ghe.corp.example/acme/kernels", wantHost: "ghe.corp.example", wantAPIURL: "https://ghe.corp.example/api/v3/"},
		{name: "-R beats the recorded repository", flags: RepoFlags{Repo: "ghe.one.example/a/b", Recorded: "evil.example/a/b", RecordedIn: "bisect.json"}, wantRepo: "ghe.one.example/a/b", wantHost: "ghe.one.example", wantAPIURL: "https://ghe.one.example/api/v3/"},
		{name: "recorded on another host is refused", flags: RepoFlags{Recorded: "evil.example/acme/kernels", RecordedIn: ".debugflow/bisect.json"},
			wantErr: []string{".debugflow/bisect.json names the repository evil.example/acme/kernels, on evil.example, which is not github.com", "pass -R evil.example/acme/kernels", "GH_HOST=evil.example"}},
		{name: "recorded on another host than GH_HOST is refused", flags: RepoFlags{Recorded: "evil.example/acme/kernels", RecordedIn: "bisect.json"}, ghHost: "ghe.corp.example",
			wantErr: []string{"on evil.example, which is not GH_HOST=ghe.corp.example"}},
		{name: "recorded with credentials", flags: RepoFlags{Recorded: "u:hunter2secret@evil.example/acme/kernels", RecordedIn: "bisect.json"},
			wantErr: []string{"***@evil.example/acme/kernels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{EnvGHHost: tt.ghHost, EnvAPIURL: tt.apiURL}
			f := &Env{
				Getenv:    func(k string) string { return env[k] },
				GitRemote: func(context.Context) (string, error) { return tt.remote, nil },
			}
			repo, host, err := f.resolve(context.Background(), tt.flags)
			if tt.wantErr != nil {
				if ExitCode(err) != ExitUsage {
					t.Fatalf("err = %v (code %d), want a usage error", err, ExitCode(err))
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if strings.Contains(err.Error(), "hunter2secret") {
					t.Errorf("credentials shown: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			api, _ := APIBaseURL(host, tt.apiURL)
			if repo.String() != tt.wantRepo || host != tt.wantHost || api != tt.wantAPIURL {
				t.Errorf("got %s host %q api %s; want %s host %q api %s", repo, host, api, tt.wantRepo, tt.wantHost, tt.wantAPIURL)
			}
		})
	}
}

// FuzzParseInterval: never panics; what it accepts is positive and at most a day.
func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"5", "500ms", "1m30s", "0", "-1", "86400", "86401", "1e3", " 7 ", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseInterval(s)
		if err != nil {
			return
		}
		if d <= 0 {
			t.Fatalf("ParseInterval(%q) = %s", s, d)
		}
	})
}
