package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: Module, Version: "v0.0.0-20261202163852-a0908f56b132+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "a0908f56b132e850e47120bfc3d6ea356c865c7e"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name       string
		bi         *debug.BuildInfo
		x          ldflags
		wantString string
		wantTagged bool
		wantSums   int
	}{
		{"no build info", nil, ldflags{}, Devel, false, 0},
		{"go run", &debug.BuildInfo{Main: debug.Module{Version: Devel}}, ldflags{}, Devel, false, 0},
		{"checkout with VCS stamping", vcs, ldflags{},
			"v0.0.0-20261202163852-a0908f56b132+dirty (revision a0908f56b132, modified)", false, 0},
		{"go install module@v0.2.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, ldflags{}, "v0.2.0", true, 0},
		{"release build: -X wins over the VCS settings", vcs,
			ldflags{version: "v0.2.0", revision: "0123456789abcdef0123456789abcdef01234567",
				stepArchives: "linux_amd64=" + sum + ",linux_arm64=nothex,../x=" + sum},
			"v0.2.0 (revision 0123456789ab)", true, 1},
		{"bundle of a modified tree", vcs, ldflags{version: "(devel)", revision: "a0908f56b132e850", modified: "true"},
			"(devel) (revision a0908f56b132, modified)", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := fromBuildInfo(tt.bi, tt.x)
			if got := info.String(); got != tt.wantString {
				t.Errorf("String() = %q, want %q", got, tt.wantString)
			}
			if got := info.Tagged(); got != tt.wantTagged {
				t.Errorf("Tagged() = %v, want %v", got, tt.wantTagged)
			}
			if len(info.StepArchiveSHA256) != tt.wantSums {
				t.Errorf("StepArchiveSHA256 = %v, want %d valid entries", info.StepArchiveSHA256, tt.wantSums)
			}
		})
	}
	if got := fromBuildInfo(vcs, ldflags{}).Platform; got != "linux/arm64" {
		t.Errorf("Platform = %q, want the build's GOOS/GOARCH linux/arm64", got)
	}
}

func TestIsRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.2.0": true, "v1.10.3": true, "v1.0.0-rc.1": true,
		"v0.0.0-20261202163852-a0908f56b132":       false,
		"v0.2.1-0.20261202163852-a0908f56b132":     false,
		"v0.0.0-20261202163852-a0908f56b132+dirty": false,
		"v0.2.0+dirty": false, "(devel)": false, "": false, "0.2.0": false, "v0.2": false, "v01.2.3": false,
	} {
		if got := IsRelease(v); got != want {
			t.Errorf("IsRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestLDFlagsRoundTrip(t *testing.T) {
	in := Info{Version: "v0.3.0", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true}
	flags := LDFlags(in)
	x := ldflags{}
	for i := 0; i+1 < len(flags); i += 2 {
		if flags[i] != "-X" {
			t.Fatalf("LDFlags = %q, want -X pairs", flags)
		}
		kv, ok := strings.CutPrefix(flags[i+1], Package+".")
		if !ok {
			t.Fatalf("flag %q does not set a variable of %s", flags[i+1], Package)
		}
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "version":
			x.version = value
		case "revision":
			x.revision = value
		case "modified":
			x.modified = value
		default:
			t.Fatalf("LDFlags sets unknown variable %q", name)
		}
	}
	out := fromBuildInfo(nil, x)
	if out.String() != in.String() {
		t.Errorf("a build with LDFlags(%v) reports %q, want %q", in, out.String(), in.String())
	}
	sums := map[string]string{"linux_arm64": strings.Repeat("1", 64), "linux_amd64": strings.Repeat("2", 64)}
	want := Package + ".stepArchives=linux_amd64=" + sums["linux_amd64"] + ",linux_arm64=" + sums["linux_arm64"]
	if got := ArchiveFlag(sums); got != want {
		t.Errorf("ArchiveFlag = %q, want %q (sorted)", got, want)
	}
}

func TestSourceDir(t *testing.T) {
	// go test builds without -trimpath: the source directory is this module's root.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := SourceDir(), filepath.Dir(filepath.Dir(wd)); got != want {
		t.Errorf("SourceDir() = %q, want the module root %q", got, want)
	}
}

// TestBothBinariesPrintTheSameVersion builds debugflow and debugflow-step together, as a
// user's checkout build and as a release build (-ldflags -X), and compares their --version.
func TestBothBinariesPrintTheSameVersion(t *testing.T) {
	tests := []struct {
		name    string
		ldflags string
		want    string
	}{
		{"checkout build", "", ""},
		{"release build", "-X " + Package + ".version=v9.8.7 -X " + Package + ".revision=0123456789abcdef0123456789abcdef01234567",
			"v9.8.7 (revision 0123456789ab)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := []string{"build", "-o", dir + string(os.PathSeparator)}
			if tt.ldflags != "" {
				args = append(args, "-ldflags", tt.ldflags)
			}
			args = append(args, "../../cmd/debugflow", "../../cmd/debugflow-step")
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			lines := map[string]string{}
			for _, name := range []string{"debugflow", "debugflow-step"} {
				out, err := exec.Command(filepath.Join(dir, name), "--version").CombinedOutput()
				if err != nil {
					t.Fatalf("%s --version: %v\n%s", name, err, out)
				}
				first, _, _ := strings.Cut(string(out), "\n")
				v, ok := strings.CutPrefix(first, name+" ")
				if !ok || v == "" {
					t.Fatalf("%s --version printed %q, want %q followed by the version", name, out, name)
				}
				lines[name] = v
			}
			if lines["debugflow"] != lines["debugflow-step"] {
				t.Errorf("debugflow --version says %q, debugflow-step --version says %q", lines["debugflow"], lines["debugflow-step"])
			}
			if tt.want != "" && lines["debugflow"] != tt.want {
				t.Errorf("version = %q, want %q", lines["debugflow"], tt.want)
			}
		})
	}
}
