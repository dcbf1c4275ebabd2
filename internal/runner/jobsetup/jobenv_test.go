package jobsetup

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"

	"github.com/debugflow/debugflow/internal/spec"
)

func TestParseEnvFile(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Var
		wantErr string
	}{
		{name: "empty", in: ""},
		{name: "NAME=value lines, = in the value", in: "A=1\nB=x=y\n\n", want: []Var{{"A", "1"}, {"B", "x=y"}}},
		{name: "a heredoc block, CRLF", in: "MSG<<EOF\r\nline 1\r\nline 2\r\nEOF\r\nN=2\r\n", want: []Var{{"MSG", "line 1\nline 2"}, {"N", "2"}}},
		{name: "= before << is a plain value", in: "A=b<<c\n", want: []Var{{"A", "b<<c"}}},
		{name: "an empty heredoc", in: "E<<D\nD\n", want: []Var{{"E", ""}}},
		{name: "written twice: both, in order", in: "A=1\nA=2\n", want: []Var{{"A", "1"}, {"A", "2"}}},
		{name: "an unclosed heredoc", in: "MSG<<D\nnever closed\n", wantErr: `delimiter "D" never closes`},
		{name: "an empty name", in: "=1\n", wantErr: "empty name"},
		{name: "neither form", in: "novalue\n", wantErr: "neither NAME=value nor NAME<<DELIMITER"},
		{name: "a heredoc without delimiter", in: "A<<\n", wantErr: "neither"},
		{name: "a NUL byte", in: "A=x\x00y\n", wantErr: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFileCommand(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseFileCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// The file `debugflow-step export` writes (githubactions' SetEnv) reads back as written.
func TestParseEnvFileReadsSetEnv(t *testing.T) {
	path := t.TempDir() + "/env"
	a := githubactions.New(githubactions.WithGetenv(func(k string) string {
		if k == "GITHUB_ENV" {
			return path
		}
		return ""
	}))
	a.SetEnv("LLVM_DIR", "/opt/llvm 22")
	a.SetEnv("NOTE", "two\nlines")
	text, err := readFileCommand(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseFileCommand(text)
	want := []Var{{"LLVM_DIR", "/opt/llvm 22"}, {"NOTE", "two\nlines"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

func FuzzParseEnvFile(f *testing.F) {
	for _, s := range []string{"A=1\n", "M<<D\nx\nD\n", "A=b<<c", "M<<D\n", "=x", "\r\n\r\n", "A<<B=C\nB=C\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		vars, err := ParseFileCommand(in)
		if err != nil {
			return
		}
		for _, v := range vars {
			if v.Name == "" || strings.ContainsRune(v.Name, '\n') || strings.ContainsRune(v.Value, 0) {
				t.Fatalf("ParseFileCommand(%q) gave %q", in, v)
			}
		}
	})
}

func TestParsePathFile(t *testing.T) {
	got := parsePathFile("/opt/a/bin\r\n\n/opt/b bin\n")
	if want := []string{"/opt/a/bin", "/opt/b bin"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The job environment is layered as on a runner: the machine's, then $GITHUB_ENV's, then the
// workflow's env: (which a $GITHUB_ENV write cannot override), then the step's env:; the folders
// of $GITHUB_PATH go first on PATH, the latest first, each once; the runner's own file variables
// of the machine (local run inside a CI job) never reach a step.
func TestJobEnv(t *testing.T) {
	j := NewJob([]string{"PATH=/usr/bin:/bin", "HOME=/home/u", "A=machine", "GITHUB_ENV=/ci/env", "GITHUB_STEP_SUMMARY=/ci/summary"},
		spec.Env{{Name: "B", Value: "job"}})
	j.apply([]Var{{"A", "exported"}, {"B", "exported"}, {"C", "exported"}}, []string{"/opt/a/bin"})
	j.apply([]Var{{"C", "again"}}, []string{"/opt/b/bin", "/opt/a/bin"})
	got := j.Environ(spec.Env{{Name: "D", Value: "step"}}, "GITHUB_ENV=/tmp/stage/env")
	want := []string{"PATH=/opt/a/bin:/opt/b/bin:/usr/bin:/bin", "HOME=/home/u", "A=exported", "B=job", "C=again", "D=step", "GITHUB_ENV=/tmp/stage/env"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("environ =\n%q\nwant\n%q", got, want)
	}
	for name, want := range map[string]string{"A": "exported", "B": "job", "D": "", "GITHUB_ENV": "", "GITHUB_STEP_SUMMARY": ""} {
		if got := j.Getenv(name); got != want {
			t.Errorf("getenv(%s) = %q, want %q", name, got, want)
		}
	}
	look := j.LookPath(func(file string) (string, error) { return "/machine/" + file, nil })
	if p, _ := look("sh"); p != "/machine/sh" {
		t.Errorf("lookPath(sh) = %s: a program not in the added folders comes from the machine's lookup", p)
	}
}

func TestNeedsRoot(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"sudo ldconfig", true},
		{"echo /usr/local/cuda/lib | sudo tee /etc/ld.so.conf.d/cuda.conf", true},
		{"sudo -E env PATH=$PATH make install", true},
		{"/usr/bin/sudo ldconfig", true},
		{"ldconfig", true},
		{"apt-get install -y cmake", true},
		{"DEBIAN_FRONTEND=noninteractive apt install -y cmake", true},
		{"make && sudo make install", true},
		{"(cd build; sudo ninja install)", true},
		{"x=$(sudo cat /etc/shadow)", true},
		{"dpkg -i pkg.deb", true},
		{"su -c 'make install'", true},
		{"python -m pip install --upgrade pip setuptools wheel", false},
		{"python -m pip install --group dev", false},
		{"python download_llvm.py | tail -n 1", false},
		{"./build.py --write-env=/tmp/build_env.sh", false},
		{"source /tmp/build_env.sh", false},
		{"git submodule update --init", false},
		{"pip install aptly sudoku", false},
		{"cat /etc/apt/sources.list", false},
		{"echo pseudo-apt", false},
	}
	for _, tt := range tests {
		if got := NeedsRoot(tt.line); got != tt.want {
			t.Errorf("NeedsRoot(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// The default spec's lines fall where docs/local.md says: the two system lines of the install
// are left to the user, everything else runs.
func TestDefaultSpecRootLines(t *testing.T) {
	s := spec.Default()
	var root []string
	for _, c := range append(append([]string{}, s.Install.Commands...), s.Build.Commands...) {
		if NeedsRoot(c) {
			root = append(root, c)
		}
	}
	want := []string{"echo /usr/local/cuda/targets/x86_64-linux/lib | sudo tee /etc/ld.so.conf.d/cuda-targets.conf", "sudo ldconfig"}
	if !reflect.DeepEqual(root, want) {
		t.Errorf("the default spec's lines that need root: %q, want %q", root, want)
	}
	for _, e := range s.Exports() {
		if NeedsRoot(e.Command) {
			t.Errorf("export %s needs root: %s", e.Name, e.Command)
		}
	}
	if NeedsRoot(s.Smoke.Command) {
		t.Errorf("the smoke test needs root: %s", s.Smoke.Command)
	}
}
