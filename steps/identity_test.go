package steps

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/testenv"
)

// fakeRoot lays out the files identity reads under a temp "/".
func fakeRoot(t *testing.T, openModule bool) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "etc/os-release"), "PRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\nID=ubuntu\nVERSION_ID=\"22.04\"\n")
	version := "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 11.4.0\n"
	if openModule {
		version = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  590.48.01  Release Build  (dvs-builder@U22-I3-AM02-24-3)\nGCC version:  gcc version 12.3.0\n"
	}
	writeFile(t, filepath.Join(root, "proc/driver/nvidia/version"), version)
	writeFile(t, filepath.Join(root, "sys/module/nvidia_uvm/parameters/uvm_disable_hmm"), "N\n")
	writeFile(t, filepath.Join(root, "sys/module/nvidia_uvm/parameters/uvm_perf_prefetch_enable"), "1\n")
	writeFile(t, filepath.Join(root, "imagegeneration/imagedata.json"), `[{"group":"Operating System","detail":"Ubuntu 22.04"}]`+"\n")
	sanitizer, err := os.ReadFile(built(t, "compute-sanitizer"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"12.4", "13.0"} {
		p := filepath.Join(root, "usr/local/cuda-"+v+"/bin/compute-sanitizer")
		testenv.WriteExecutable(t, p, sanitizer)
	}
	return root
}

func TestIdentityWithDoubles(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	kmsg := filepath.Join(t.TempDir(), "kmsg")
	writeFile(t, kmsg, "[Wed Dec  2 10:45:59 2026] Linux version 6.8.0\n")
	te := newTestEnv(t, map[string]string{
		"PATH":            binDir(t, "nvidia-smi", "dmesg") + ":/usr/bin:/bin",
		"FAKE_DMESG_FILE": kmsg,
		"ImageOS":         "ubuntu22",
		"ImageVersion":    "20251201.1",
	})
	te.Root = fakeRoot(t, true)
	out := t.TempDir()
	if err := RunIdentity(context.Background(), te.Env, IdentityOptions{Out: out, Python: py}); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, filepath.Join(out, "system_identity.txt"))
	wants := []string{
		"==== uname -a ====\nLinux ",
		"==== /etc/os-release ====\nPRETTY_NAME=\"Ubuntu 22.04.5 LTS\"",
		"==== nvidia-smi ====\n", "|   0  Tesla T4 ",
		"==== nvidia-smi -q ====\n", "Product Name                                       : Tesla T4",
		"==== /proc/driver/nvidia/version ====\nNVRM version: NVIDIA UNIX Open Kernel Module",
		`kernel module: open ("Open Kernel Module" in /proc/driver/nvidia/version)`,
		"==== HMM / unified memory ====\nnvidia-smi -q Addressing Mode: HMM\n",
		"CUDA device attributes (cuDeviceGetAttribute through " + py + "):\nunavailable: cannot load libcuda.so.1",
		"uvm_disable_hmm = N\nuvm_perf_prefetch_enable = 1\n",
		"==== compute-sanitizer --version ====\npath: " + te.Root + "/usr/local/cuda-13.0/bin/compute-sanitizer\n",
		"Version 2025.3.1.0 (build 36400806) (public-release)",
		"==== python --version (" + py + ") ====\nPython 3.",
		"==== installed packages (" + py + ", as pip freeze lists them) ====\n", "\npytest==",
		"==== runner image ====\nImageOS=ubuntu22 ImageVersion=20251201.1\n/imagegeneration/imagedata.json:\n[{\"group\"",
	}
	last := -1
	for _, w := range wants {
		i := strings.Index(text, w)
		if i < 0 {
			t.Errorf("system_identity.txt lacks %q", w)
			continue
		}
		if i < last {
			t.Errorf("%q is out of order", w)
		}
		last = i
	}
	if t.Failed() {
		t.Logf("system_identity.txt:\n%s", text)
	}
	start := readFile(t, filepath.Join(out, "dmesg_start.log"))
	if !strings.Contains(start, "# source: dmesg --ctime") || !strings.Contains(start, "Linux version 6.8.0") {
		t.Errorf("dmesg_start.log:\n%s", start)
	}
	if !strings.Contains(te.stdout.String(), "==> system identity") {
		t.Errorf("no terminal group heading in stdout")
	}
	// The GPU's health before the run, for the "after" snapshot to compare with.
	if !strings.Contains(readFile(t, filepath.Join(out, HealthCSVFile(HealthBefore))), "GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11") ||
		!strings.Contains(te.stdout.String(), "health before: Tesla T4 GPU-5f0e4c7a-8b1d-4e4a-9f3e-2a7c1d0b9e11 serial 1563420012345, driver 590.48.01, 33 C") {
		t.Errorf("no health snapshot \"before\":\n%s", te.stdout)
	}
}

// TestIdentityToolsMissing runs on a machine with nothing: every section
// says what is missing and the verb still succeeds.
func TestIdentityToolsMissing(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
	te.Root = t.TempDir()
	out := t.TempDir()
	if err := RunIdentity(context.Background(), te.Env, IdentityOptions{Out: out}); err != nil {
		t.Fatalf("identity must not fail on missing tools: %v", err)
	}
	text := readFile(t, filepath.Join(out, "system_identity.txt"))
	for _, w := range []string{
		"==== uname -a ====\nuname: not found",
		"/etc/os-release: not found",
		"==== nvidia-smi ====\nnvidia-smi: not found",
		"==== nvidia-smi -q ====\nnvidia-smi: not found",
		"/proc/driver/nvidia/version: not found\nkernel module: unknown (no NVIDIA driver loaded)",
		"nvidia-smi -q Addressing Mode: not reported",
		"unavailable: python3: not found",
		"nvidia_uvm: not found (module not loaded?)",
		"==== compute-sanitizer --version ====\ncompute-sanitizer: not found",
		"==== python --version (python3) ====\npython3: not found",
		"ImageOS/ImageVersion: not set",
		"/imagegeneration/imagedata.json: not found",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("system_identity.txt lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("system_identity.txt:\n%s", text)
	}
	start := readFile(t, filepath.Join(out, "dmesg_start.log"))
	if !strings.Contains(start, "# source: none") || !strings.Contains(start, "dmesg: not found") {
		t.Errorf("dmesg_start.log:\n%s", start)
	}
}

// The first identity runs before the install steps; --after-build appends the toolchain as the
// build left it and takes no second dmesg snapshot.
func TestIdentityAfterBuildAppendsTheToolchain(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
	te.Root = t.TempDir()
	out := t.TempDir()
	if err := RunIdentity(context.Background(), te.Env, IdentityOptions{Out: out}); err != nil {
		t.Fatal(err)
	}
	startBefore := readFile(t, filepath.Join(out, "dmesg_start.log"))
	te.Root = fakeRoot(t, true) // the apt step installed the CUDA toolkit
	if err := RunIdentity(context.Background(), te.Env, IdentityOptions{Out: out, AfterBuild: true}); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, filepath.Join(out, "system_identity.txt"))
	before, after, found := strings.Cut(text, "# ----- after install and build -----")
	if !found {
		t.Fatalf("no after-build section:\n%s", text)
	}
	if !strings.Contains(before, "==== uname -a ====") || !strings.Contains(before, "compute-sanitizer: not found") {
		t.Errorf("the first identity was not kept:\n%s", before)
	}
	if !strings.Contains(after, "Version 2025.3.1.0") || strings.Contains(after, "uname") {
		t.Errorf("the after-build section should hold only the toolchain, with the sanitizer:\n%s", after)
	}
	if got := readFile(t, filepath.Join(out, "dmesg_start.log")); got != startBefore {
		t.Error("--after-build took a new dmesg snapshot over \"start\"")
	}
}

func TestIdentityDriverDown(t *testing.T) {
	t.Parallel()
	te := newTestEnv(t, map[string]string{"PATH": binDir(t, "nvidia-smi"), "FAKE_NVIDIA_SMI_FAIL": "1"})
	te.Root = fakeRoot(t, false)
	text := BuildIdentity(context.Background(), te.Env, IdentityOptions{Python: "python3"})
	for _, w := range []string{
		"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
		"nvidia-smi: exit status 9",
		"kernel module: proprietary",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("identity lacks %q:\n%s", w, text)
		}
	}
}

func TestKernelModuleFlavor(t *testing.T) {
	t.Parallel()
	tests := []struct{ version, want string }{
		{"", "unknown"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  590.48.01", "open"},
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05", "proprietary"},
	}
	for _, tt := range tests {
		if got := kernelModuleFlavor(tt.version); !strings.HasPrefix(got, tt.want) {
			t.Errorf("kernelModuleFlavor(%q) = %q, want prefix %q", tt.version, got, tt.want)
		}
	}
}

func TestAddressingMode(t *testing.T) {
	t.Parallel()
	tests := []struct{ query, want string }{
		{"    Addressing Mode                   : HMM\n", "HMM"},
		{"    Addressing Mode : ATS", "ATS"},
		{"    Product Name : Tesla T4\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := addressingMode(tt.query); got != tt.want {
			t.Errorf("addressingMode(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

// The installed packages are read from the metadata pip reads, so the section says what
// `pip freeze` says: checked against the real pip of the test interpreter, and on a made-up
// site directory for the cases pip prints differently (a URL install, an editable one, a
// name shadowed by an earlier entry of sys.path).
func TestInstalledPackagesAsPipFreeze(t *testing.T) {
	t.Parallel()
	py := testenv.PytestPython(t)
	te := newTestEnv(t, map[string]string{"PATH": "/usr/bin:/bin"})
	list := func(t *testing.T, pythonPath string) string {
		t.Helper()
		te.vars["PYTHONPATH"] = pythonPath
		defer delete(te.vars, "PYTHONPATH")
		w := &identityWriter{}
		writeToolchain(context.Background(), te.Env, IdentityOptions{Python: py, Sanitizer: "/nonexistent"}, w, identityRunner(context.Background(), te.Env, w))
		_, packages, ok := strings.Cut(w.b.String(), "==== installed packages ("+py+", as pip freeze lists them) ====\n")
		if !ok {
			t.Fatalf("no installed packages section:\n%s", w.b.String())
		}
		return packages
	}
	t.Run("every line pip freeze prints", func(t *testing.T) {
		cmd := exec.Command(py, "-m", "pip", "freeze")
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		freeze, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s -m pip freeze: %v (CI installs python3-pip for this comparison)", py, err)
		}
		got := list(t, "")
		lines := strings.Fields(string(freeze))
		if len(lines) < 3 {
			t.Fatalf("pip freeze printed %q: too little to compare", freeze)
		}
		for _, l := range lines {
			if !strings.Contains("\n"+got, "\n"+l+"\n") {
				t.Errorf("pip freeze prints %q, the section does not:\n%s", l, got)
			}
		}
	})
	t.Run("a real editable install", func(t *testing.T) {
		// pip itself installs the project in editable mode into a virtual environment, offline
		// (setuptools from the system, no build isolation); the listing must print pip's lines.
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "proj/pyproject.toml"), "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n[project]\nname = \"edpkg\"\nversion = \"0.4.2\"\n")
		writeFile(t, filepath.Join(dir, "proj/src/edpkg/__init__.py"), "")
		venvPython := filepath.Join(dir, "venv/bin/python")
		for _, args := range [][]string{
			{py, "-m", "venv", "--system-site-packages", "--without-pip", filepath.Join(dir, "venv")},
			{venvPython, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index", "-e", filepath.Join(dir, "proj")},
		} {
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%q: %v\n%s", args, err, out)
			}
		}
		freeze, err := exec.Command(venvPython, "-m", "pip", "freeze").Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(freeze), "-e "+filepath.Join(dir, "proj")+"\n") {
			t.Fatalf("pip freeze does not list the editable install:\n%s", freeze)
		}
		w := &identityWriter{}
		writeToolchain(context.Background(), te.Env, IdentityOptions{Python: venvPython, Sanitizer: "/nonexistent"}, w, identityRunner(context.Background(), te.Env, w))
		for _, l := range strings.Split(strings.TrimSpace(string(freeze)), "\n") {
			if !strings.Contains(w.b.String(), "\n"+l+"\n") {
				t.Errorf("pip freeze prints %q, the section does not:\n%s", l, w.b.String())
			}
		}
	})
	t.Run("URL, editable and shadowed installs", func(t *testing.T) {
		first, second := t.TempDir(), t.TempDir()
		dist := func(dir, name, version, directURL string) {
			d := filepath.Join(dir, name+"-"+version+".dist-info")
			writeFile(t, filepath.Join(d, "METADATA"), "Metadata-Version: 2.1\nName: "+name+"\nVersion: "+version+"\n")
			if directURL != "" {
				writeFile(t, filepath.Join(d, "direct_url.json"), directURL)
			}
		}
		dist(first, "Zeta_Pkg", "1.0", "")
		dist(first, "quadrants", "0.4.2", `{"url": "file:///src/quadrants", "dir_info": {"editable": true}}`)
		dist(first, "localwheel", "2.0", `{"url": "file:///tmp/localwheel-2.0-py3-none-any.whl", "archive_info": {}}`)
		dist(first, "brokenurl", "3.0", `{not json`)
		dist(first, "spaced", "1.1", `{"url": "file:///home/dev/my%20proj", "dir_info": {"editable": true}}`)
		dist(second, "zeta-pkg", "9.9", "") // shadowed by Zeta_Pkg 1.0, first on sys.path
		// Only the headers count: a description that quotes headers names nothing.
		writeFile(t, filepath.Join(first, "described-1.0.dist-info", "METADATA"),
			"Metadata-Version: 2.1\r\nSummary: a\r\n  Name: folded\r\nname:  described\r\nVERSION: 1.0\r\n\r\nName: fromthebody\n")
		writeFile(t, filepath.Join(first, "nameless-1.0.dist-info", "METADATA"), "Metadata-Version: 2.1\n\nName: fromthebody\nVersion: 6.6\n")
		// Only a file's first MiB is read: a header beyond it is not seen.
		writeFile(t, filepath.Join(first, "huge-1.0.dist-info", "METADATA"), "Metadata-Version: 2.1\nName: huge\nVersion: 1.0\n\n"+strings.Repeat("x", 2<<20))
		writeFile(t, filepath.Join(first, "late-1.0.dist-info", "METADATA"), "Metadata-Version: 2.1\n"+strings.Repeat("X-Pad: 0123456789\n", 1<<16)+"Name: beyond\nVersion: 1.0\n")
		// setuptools' egg-info, as a folder (PKG-INFO) and as a single file.
		writeFile(t, filepath.Join(second, "eggdir.egg-info", "PKG-INFO"), "Metadata-Version: 1.2\nName: eggdir\nVersion: 0.3\n")
		writeFile(t, filepath.Join(second, "eggfile-0.5.egg-info"), "Metadata-Version: 1.1\nName: eggfile\nVersion: 0.5\n")
		got := list(t, first+":"+second)
		for _, want := range []string{
			"\nZeta_Pkg==1.0\n",
			"\n# Editable install with no version control (quadrants==0.4.2)\n-e /src/quadrants\n",
			"\nlocalwheel @ file:///tmp/localwheel-2.0-py3-none-any.whl\n",
			"\nbrokenurl==3.0\n",
			"\n-e /home/dev/my proj\n", // the URL's escapes undone, as pip does
			"\ndescribed==1.0\n",
			"\neggdir==0.3\n",
			"\neggfile==0.5\n",
			"\nhuge==1.0\n",
		} {
			if !strings.Contains("\n"+got, want) {
				t.Errorf("the section lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "beyond") {
			t.Errorf("a header after the first MiB was read:\n%s", got)
		}
		if strings.Contains(got, "folded") || strings.Contains(got, "fromthebody") || strings.Contains(got, "6.6") {
			t.Errorf("a folded line or the description was read as a header:\n%s", got)
		}
		if strings.Contains(got, "9.9") {
			t.Errorf("the shadowed zeta-pkg 9.9 is listed:\n%s", got)
		}
		if i, j := strings.Index(got, "brokenurl=="), strings.Index(got, "Zeta_Pkg=="); i < 0 || j < i {
			t.Errorf("not sorted by name:\n%s", got)
		}
	})
	t.Run("an interpreter the script fails on asks pip", func(t *testing.T) {
		bin := t.TempDir()
		old := filepath.Join(bin, "python3.7")
		testenv.WriteExecutable(t, old, []byte("#!/bin/sh\ncase \"$1\" in\n-c) echo \"ModuleNotFoundError: No module named 'importlib.metadata'\" >&2; exit 1 ;;\n-m) echo 'oldpkg==1.0' ;;\n--version) echo 'Python 3.7.17' ;;\nesac\n"))
		w := &identityWriter{}
		writeToolchain(context.Background(), te.Env, IdentityOptions{Python: old, Sanitizer: "/nonexistent"}, w, identityRunner(context.Background(), te.Env, w))
		if want := "==== installed packages (" + old + ", as pip freeze lists them) ====\noldpkg==1.0\n"; !strings.Contains(w.b.String(), want) {
			t.Errorf("section:\n%s\nwant %q", w.b.String(), want)
		}
	})
}

// BenchmarkInstalledPackages times the installed-packages listing against the same listing
// through importlib.metadata (which parses every metadata file whole, twice), pip freeze and
// a bare interpreter, the anchor, in turn: `go test -run '^$' -bench InstalledPackages
// -benchtime 20x ./steps`. docs/step-runner.md quotes it.
func BenchmarkInstalledPackages(b *testing.B) {
	py := testenv.PytestPython(b)
	throughImportlib := `import importlib.metadata as md
for d in md.distributions():
    print(d.metadata["Name"], d.version)`
	testenv.BenchProcesses(b, []testenv.StartupProgram{
		{Name: "listing", Argv: []string{py, "-c", installedPackagesScript}},
		{Name: "importlib.metadata", Argv: []string{py, "-c", throughImportlib}},
		{Name: "pip freeze", Argv: []string{py, "-m", "pip", "freeze"}},
		{Name: "bare", Argv: []string{py, "-c", "pass"}},
	})
}

// TestIdentityAfterBuildKeepsTheToolchainWhenTheRecordFails: a build record that cannot be
// made (a bad --cache) or written (build.json not writable) is reported, after the toolchain
// sections already collected are appended: nothing is lost to the failure.
func TestIdentityAfterBuildKeepsTheToolchainWhenTheRecordFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		record BuildRecordOptions
		// setup breaks the evidence folder before the step.
		setup    func(t *testing.T, out string)
		wantCode int
		want     []string
	}{
		{name: "a bad --cache", record: BuildRecordOptions{Cache: []string{"Bad Name=true"}},
			wantCode: ExitUsage, want: []string{"build record not written", "--cache"}},
		{name: "build.json not writable", record: BuildRecordOptions{Cache: []string{"pip=true"}},
			setup: func(t *testing.T, out string) {
				// A folder in build.json's place: the write cannot replace it.
				writeFile(t, filepath.Join(out, BuildRecordFile, "x"), "")
			},
			wantCode: ExitFailure, want: []string{"build record not written", "cache pip: hit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			te := newTestEnv(t, map[string]string{"PATH": t.TempDir()})
			te.Root = fakeRoot(t, true)
			out := t.TempDir()
			if c.setup != nil {
				c.setup(t, out)
			}
			err := RunIdentity(context.Background(), te.Env, IdentityOptions{Out: out, AfterBuild: true, Record: c.record})
			if got := ExitCodeFor(err); got != c.wantCode {
				t.Errorf("exit %d (%v), want %d", got, err, c.wantCode)
			}
			text := readFileQuiet(filepath.Join(out, "system_identity.txt"))
			_, after, found := strings.Cut(text, "# ----- after install and build -----")
			if !found || !strings.Contains(after, "Version 2025.3.1.0") {
				t.Fatalf("the toolchain collected was lost to the failed build record:\n%s", text)
			}
			for _, w := range c.want {
				if !strings.Contains(after, w) {
					t.Errorf("system_identity.txt does not say %q:\n%s", w, after)
				}
			}
			if !strings.Contains(te.stdout.String(), "appended to") {
				t.Errorf("the step did not say it appended the toolchain:\n%s", te.stdout)
			}
		})
	}
}
