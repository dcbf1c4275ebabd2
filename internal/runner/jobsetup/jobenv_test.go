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

// TestNeedsRoot: every way a spec line can reach a command that needs root (a wrapper, a
// quote or backslash in its name, a path, a variable, a shell of its own, a line continuation)
// is found, with the reason printed; lines free of them, the reference spec's included, run.
func TestNeedsRoot(t *testing.T) {
	tests := []struct {
		line string
		why  string // "" when the line runs
	}{
		{"sudo ldconfig", "calls sudo"},
		{"echo /usr/local/cuda/lib | sudo tee /etc/ld.so.conf.d/cuda.conf", "calls sudo"},
		{"sudo -E env PATH=$PATH make install", "calls sudo"},
		{"/usr/bin/sudo ldconfig", "calls sudo"},
		{"/usr/local/bin/sudo ldconfig", "calls sudo"},
		{"ldconfig", "calls ldconfig"},
		{"apt-get install -y cmake", "calls apt-get"},
		{"DEBIAN_FRONTEND=noninteractive apt install -y cmake", "calls apt"},
		{"DEBIAN_FRONTEND=noninteractive apt-get install -y cmake", "calls apt-get"},
		{"apt-get.real install -y cmake", "calls apt-get.real"},
		{"make && sudo make install", "calls sudo"},
		{"make || sudo make install", "calls sudo"},
		{"make; sudo make install", "calls sudo"},
		{"(cd build; sudo ninja install)", "calls sudo"},
		{"{ sudo ninja install; }", "calls sudo"},
		{"x=$(sudo cat /etc/shadow)", "calls sudo"},
		{"x=`sudo cat /etc/shadow`", "calls sudo"},
		{"dpkg -i pkg.deb", "calls dpkg"},
		{"su -c 'make install'", "calls su"},
		{"env sudo ldconfig", "calls sudo"},
		{"command sudo ldconfig", "calls sudo"},
		{"exec sudo ldconfig", "calls sudo"},
		{"nice sudo ldconfig", "calls sudo"},
		{"time sudo ldconfig", "calls sudo"},
		{"echo pkg | xargs sudo apt-get install", "calls sudo"},
		{`\sudo ldconfig`, "calls sudo"},
		{`"sudo" ldconfig`, "calls sudo"},
		{`'sudo' ldconfig`, "calls sudo"},
		{`s\udo ldconfig`, "calls sudo"},
		{`s""udo ldconfig`, "calls sudo"},
		{"bash -c 'sudo make install'", "calls sudo"},
		{`sh -c "sudo make install"`, "calls sudo"},
		{`eval "sudo make install"`, "calls sudo"},
		{"SUDO=sudo; $SUDO make install", "calls sudo"},
		{"SUDO=sudo", "calls sudo"},
		{"root() { sudo \"$@\"; }", "calls sudo"},
		{"shopt -s expand_aliases; alias s=sudo", "calls sudo"},
		{"bash <<'EOF'\nsudo make install\nEOF", "calls sudo"},
		{"make && su\\\ndo make install", "calls sudo"},
		{"make \\\n  && sudo make install", "calls sudo"},
		{"doas make install", "calls doas"},
		{"pkexec make install", "calls pkexec"},
		{"runuser -u nobody -- id", "calls runuser"},
		{"setpriv --reuid=0 id", "calls setpriv"},
		{"systemctl restart nvidia-persistenced", "calls systemctl"},
		{"service docker start", "calls service"},
		{"modprobe nvidia", "calls modprobe"},
		{"yum install -y cmake", "calls yum"},
		{"dnf install -y cmake", "calls dnf"},
		{"aptitude install cmake", "calls aptitude"},
		{"update-alternatives --set gcc /usr/bin/gcc-12", "calls update-alternatives"},
		{"echo /usr/local/cuda/lib64 | tee /etc/ld.so.conf.d/cuda.conf", "writes to /etc/ld.so.conf.d/cuda.conf"},
		{"echo /usr/local/cuda/lib64 | tee -a /etc/ld.so.conf.d/cuda.conf > /dev/null", "writes to /etc/ld.so.conf.d/cuda.conf"},
		{"echo /usr/local/cuda/lib64 > /etc/ld.so.conf.d/cuda.conf", "writes to /etc/ld.so.conf.d/cuda.conf"},
		{"echo x >>/usr/local/lib/x.pth", "writes to /usr/local/lib/x.pth"},
		{"cat > /etc/profile.d/x.sh <<EOF\nexport X=1\nEOF", "writes to /etc/profile.d/x.sh"},
		{"cp libfoo.so /usr/local/lib/", "writes to /usr/local/lib/"},
		{"ln -sf /usr/bin/python3 /usr/bin/python", "writes to /usr/bin/python"},
		{"mkdir -p /opt/tools", "writes to /opt/tools"},
		{"rm -rf /usr/local/cuda", "writes to /usr/local/cuda"},
		{"chmod 755 /usr/local/bin/tool", "writes to /usr/local/bin/tool"},
		{"python -m pip install --upgrade pip setuptools wheel", ""},
		{"python -m pip install --group dev", ""},
		{"python -m pip install -r requirements_test_xdist.txt", ""},
		{"python download_llvm.py | tail -n 1", ""},
		{"./build.py --write-env=/tmp/build_env.sh", ""},
		{"source /tmp/build_env.sh", ""},
		{`chmod +x "${LLVM_DIR:?}"/bin/*`, ""},
		{`"$LLVM_DIR/bin/clang" --version`, ""},
		{"python setup.py develop", ""},
		{`ls -d "$PWD"/_skbuild/*/cmake-build | head -n 1`, ""},
		{"git submodule update --init", ""},
		{"pip install aptly sudoku", ""},
		{"cat /etc/apt/sources.list", ""},
		{"cp /usr/local/cuda/lib64/libcudart.so python/lib/", ""},
		{"make 2>/dev/null >/dev/null", ""},
		{"echo pseudo-apt", ""},
		{"echo done > /tmp/done.txt", ""},
		{`echo "X=1" >> "$GITHUB_ENV"`, ""},
	}
	for _, tt := range tests {
		got := RootUse(tt.line)
		if got != tt.why {
			t.Errorf("RootUse(%q) = %q, want %q", tt.line, got, tt.why)
		}
		if NeedsRoot(tt.line) != (tt.why != "") {
			t.Errorf("NeedsRoot(%q) = %v, want %v", tt.line, !(tt.why != ""), tt.why != "")
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
