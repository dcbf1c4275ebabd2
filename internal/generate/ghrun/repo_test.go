package ghrun

import (
	"strings"
	"testing"
)

func TestRepoFromRemote(t *testing.T) {
	tests := []struct {
		remote string
		want   Repo
	}{
		{"https://github.com/acme/kernels.git", Repo{"github.com", "acme", "kernels"}},
		{"https://github.com/acme/kernels", Repo{"github.com", "acme", "kernels"}},
		{"https://github.com/acme/kernels/", Repo{"github.com", "acme", "kernels"}},
		{"http://github.com/acme/kernels.git", Repo{"github.com", "acme", "kernels"}},
		{"https://x-access-token:ghs_abc@github.com/acme/kernels.git", Repo{"github.com", "acme", "kernels"}},
		{"git@github.com:acme/kernels.git", Repo{"github.com", "acme", "kernels"}},
		{"git@github.com:acme/kernels", Repo{"github.com", "acme", "kernels"}},
		{"github.com:acme/kernels.git", Repo{"github.com", "acme", "kernels"}},
		{"ssh://git@github.com/acme/kernels.git", Repo{"github.com", "acme", "kernels"}},
		{"ssh://git@ghe.example.com:2222/acme/kernels.git", Repo{"ghe.example.com", "acme", "kernels"}},
		{"git://github.com/acme/kernels.git", Repo{"github.com", "acme", "kernels"}},
		{"https://GHE.example.com:8443/acme/kernels.git", Repo{"ghe.example.com:8443", "acme", "kernels"}},
		{"git@github.com:acme/my.repo-1.git", Repo{"github.com", "acme", "my.repo-1"}},
	}
	for _, tt := range tests {
		got, err := RepoFromRemote(tt.remote)
		if err != nil {
			t.Errorf("RepoFromRemote(%q): %v", tt.remote, err)
			continue
		}
		if got != tt.want {
			t.Errorf("RepoFromRemote(%q) = %+v, want %+v", tt.remote, got, tt.want)
		}
	}
}

func TestRepoFromRemoteErrors(t *testing.T) {
	tests := []struct{ remote, want string }{
		{"/home/me/kernels", "not a URL git understands"},
		{"https://github.com/acme", "expected a path OWNER/REPO"},
		{"https://github.com/acme/kernels/extra", "expected a path OWNER/REPO"},
		{"ftp://github.com/acme/kernels", `unsupported scheme "ftp"`},
		{"git@github.com:-acme/kernels", "not a valid owner"},
		{"https://user:hunter2secret@github.com/acme", "***"},
	}
	for _, tt := range tests {
		_, err := RepoFromRemote(tt.remote)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("RepoFromRemote(%q) error = %v, want %q", tt.remote, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("credentials leaked in %v", err)
		}
	}
}

func TestParseRepo(t *testing.T) {
	tests := []struct {
		in      string
		want    Repo
		wantErr string
	}{
		{in: "acme/kernels", want: Repo{Owner: "acme", Name: "kernels"}},
		{in: "GHE.example.com/acme/kernels", want: Repo{"ghe.example.com", "acme", "kernels"}},
		{in: "acme", wantErr: "expected OWNER/REPO"},
		{in: "a/b/c/d", wantErr: "expected OWNER/REPO"},
		{in: "acme/..", wantErr: "not a valid repository name"},
		{in: "ac me/kernels", wantErr: "not a valid owner"},
		{in: "bad host!/acme/kernels", wantErr: "not a host name"},
	}
	for _, tt := range tests {
		got, err := ParseRepo(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRepo(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRepo(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestRepoString(t *testing.T) {
	for _, tt := range []struct {
		r    Repo
		want string
	}{
		{Repo{"", "a", "b"}, "a/b"},
		{Repo{"github.com", "a", "b"}, "a/b"},
		{Repo{"ghe.example.com", "a", "b"}, "ghe.example.com/a/b"},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestParseRunArg(t *testing.T) {
	tests := []struct {
		in       string
		wantID   int64
		wantRepo *Repo
		wantErr  bool
	}{
		{in: "123456789", wantID: 123456789},
		{in: "https://github.com/acme/kernels/actions/runs/42", wantID: 42, wantRepo: &Repo{"github.com", "acme", "kernels"}},
		{in: "https://ghe.example.com/acme/kernels/actions/runs/42/job/7", wantID: 42, wantRepo: &Repo{"ghe.example.com", "acme", "kernels"}},
		{in: "https://github.com/acme/kernels/actions/runs/42/attempts/2", wantID: 42, wantRepo: &Repo{"github.com", "acme", "kernels"}},
		{in: "0", wantErr: true},
		{in: "-5", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "https://github.com/acme/kernels/pull/42", wantErr: true},
	}
	for _, tt := range tests {
		id, repo, err := ParseRunArg(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParseRunArg(%q) = %d, want an error", tt.in, id)
			}
			continue
		}
		if err != nil || id != tt.wantID {
			t.Errorf("ParseRunArg(%q) = %d, %v; want %d", tt.in, id, err, tt.wantID)
		}
		if (repo == nil) != (tt.wantRepo == nil) || (repo != nil && *repo != *tt.wantRepo) {
			t.Errorf("ParseRunArg(%q) repo = %v, want %v", tt.in, repo, tt.wantRepo)
		}
	}
}

// FuzzRepoFromRemote checks the remote parser never panics and that what it
// accepts is a repository the other parser accepts too.
func FuzzRepoFromRemote(f *testing.F) {
	for _, s := range []string{"git@github.com:acme/kernels.git", "https://github.com/a/b", "ssh://git@h:22/a/b.git",
		"https://u:p@h/a/b", "h:a/b", "https://[::1]/a/b", "git://x/a/b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		r, err := RepoFromRemote(remote)
		if err != nil {
			return
		}
		back, err := ParseRepo(r.Owner + "/" + r.Name)
		if err != nil || back.Owner != r.Owner || back.Name != r.Name {
			t.Fatalf("RepoFromRemote(%q) = %+v, which ParseRepo refuses: %v", remote, r, err)
		}
	})
}

// FuzzParseRunArg checks run arguments never panic and give positive ids.
func FuzzParseRunArg(f *testing.F) {
	for _, s := range []string{"123", "https://github.com/a/b/actions/runs/9", "https://h/a/b/actions/runs/99999999999999999999", "http://x/actions/runs/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, repo, err := ParseRunArg(s)
		if err != nil {
			return
		}
		if id <= 0 {
			t.Fatalf("ParseRunArg(%q) id %d", s, id)
		}
		if repo != nil && repo.check() != nil {
			t.Fatalf("ParseRunArg(%q) gave an invalid repo %+v", s, repo)
		}
	})
}
