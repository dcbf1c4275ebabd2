package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/debugflow/debugflow/internal/evidencefiles"
	dfversion "github.com/debugflow/debugflow/internal/version"
)

// IdentityOptions configures `debugflow-step identity`.
type IdentityOptions struct {
	// Out is the artifact directory.
	Out string `flag:"out" default:"/tmp/repro" usage:"artifact directory (created if missing)" emit:"always"`
	// Python is the interpreter used for the Python version, the installed packages and
	// the libcuda device-attribute probe.
	Python string `flag:"python" default:"python3" emit:"always" usage:"Python interpreter for version, installed packages (what pip freeze lists) and the libcuda attribute probe"`
	// DmesgSource replaces the kernel log for the "start" snapshot (tests).
	DmesgSource string `flag:"dmesg-source" usage:"read this file instead of the kernel log"`
	// Sanitizer is an explicit compute-sanitizer path (default: search).
	Sanitizer string `flag:"sanitizer" usage:"compute-sanitizer path (default: search)"`
	// AfterBuild appends only the toolchain sections (compute-sanitizer, Python, its packages)
	// as they are after the install and build steps, and takes no dmesg snapshot. The first
	// identity runs before anything is installed, so its kernel-log baseline comes first.
	AfterBuild bool `flag:"after-build" usage:"append compute-sanitizer, Python and its installed packages as they are after the install and build steps (no dmesg snapshot), and the build record (build.json): the timers' install and build times and the flags below"`
	// Record is what the caches gave the install and build (with AfterBuild): written with
	// the timings to build.json and to system_identity.txt.
	Record BuildRecordOptions
}

const identityTimeout = 60 * time.Second

// hmmProbe asks libcuda for the unified-memory device attributes. It
// prints "unavailable: ..." instead of failing so a runner without a
// driver still gets a complete identity file.
//
// Attribute numbers are from cuda.h (CUdevice_attribute).
const hmmProbe = `import ctypes, sys
ATTRS = [(83, "managed_memory"), (88, "pageable_memory_access"),
         (99, "host_register_supported"),
         (100, "pageable_memory_access_uses_host_page_tables")]
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    print("unavailable: cannot load libcuda.so.1 (no NVIDIA driver?): %s" % e)
    sys.exit(0)
r = cuda.cuInit(0)
if r != 0:
    print("unavailable: cuInit returned CUresult %d" % r)
    sys.exit(0)
n = ctypes.c_int()
r = cuda.cuDeviceGetCount(ctypes.byref(n))
if r != 0:
    print("unavailable: cuDeviceGetCount returned CUresult %d" % r)
    sys.exit(0)
if n.value == 0:
    print("unavailable: no CUDA device")
for i in range(n.value):
    dev = ctypes.c_int()
    cuda.cuDeviceGet(ctypes.byref(dev), i)
    name = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(name, 256, dev)
    vals = []
    for attr, label in ATTRS:
        v = ctypes.c_int()
        r = cuda.cuDeviceGetAttribute(ctypes.byref(v), attr, dev)
        vals.append("%s(%d)=%s" % (label, attr, v.value if r == 0 else "error %d" % r))
    print("device %d (%s): %s" % (i, name.value.decode(errors="replace"), " ".join(vals)))
`

// identityWriter collects the sections of system_identity.txt.
type identityWriter struct{ b strings.Builder }

func (w *identityWriter) section(title string) {
	if w.b.Len() > 0 {
		w.b.WriteByte('\n')
	}
	fmt.Fprintf(&w.b, "==== %s ====\n", title)
}

func (w *identityWriter) text(s string) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

func (w *identityWriter) linef(format string, args ...any) {
	fmt.Fprintf(&w.b, format+"\n", args...)
}

// RunIdentity is `debugflow-step identity`: it writes system_identity.txt
// and takes the "start" dmesg snapshot. Missing tools are recorded, never
// fatal.
func RunIdentity(ctx context.Context, env *Env, opts IdentityOptions) error {
	if err := ensureDir(opts.Out); err != nil {
		return err
	}
	if opts.Python == "" {
		opts.Python = "python3"
	}
	path := filepath.Join(opts.Out, evidencefiles.SystemIdentity)
	if opts.AfterBuild {
		return appendToolchain(ctx, env, opts, path)
	}
	text := BuildIdentity(ctx, env, opts)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write system identity: %w", err)
	}
	end := env.group("system identity")
	fmt.Fprint(env.Stdout, text)
	end()
	fmt.Fprintf(env.Stdout, "wrote %s\n", path)

	snap, err := TakeSnapshot(ctx, env, DmesgOptions{Out: opts.Out, Name: "start", Source: opts.DmesgSource})
	if err != nil {
		return err
	}
	printSnapshot(env, snap)
	// The GPU's health before anything runs, for `health --name after` to compare with.
	health, err := TakeHealth(ctx, env, opts.Out, HealthBefore)
	if err != nil {
		return err
	}
	printHealth(env, HealthBefore, health)
	return nil
}

// appendToolchain adds the toolchain as it is after install and build to system_identity.txt.
// A build record that cannot be made or written is said there and reported after the append:
// the toolchain sections already collected are never lost to it.
func appendToolchain(ctx context.Context, env *Env, opts IdentityOptions, path string) error {
	w := &identityWriter{}
	w.b.WriteString("\n# ----- after install and build -----\n")
	writeToolchain(ctx, env, opts, w, identityRunner(ctx, env, w))
	lines, recErr := recordBuild(ctx, env, opts.Out, opts.Record)
	if recErr != nil {
		recErr = fmt.Errorf("build record: %w", recErr)
	}
	if len(lines) > 0 || recErr != nil {
		w.section("build time and caches")
		for _, l := range lines {
			w.linef("%s", l)
		}
		if recErr != nil {
			w.linef("build record not written (%s): %v", BuildRecordFile, recErr)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return errors.Join(fmt.Errorf("append to system identity: %w", err), recErr)
	}
	if _, err := f.WriteString(w.b.String()); err != nil {
		f.Close()
		return errors.Join(fmt.Errorf("append to system identity: %w", err), recErr)
	}
	if err := f.Close(); err != nil {
		return errors.Join(fmt.Errorf("append to system identity: %w", err), recErr)
	}
	end := env.group("toolchain after install and build")
	fmt.Fprint(env.Stdout, w.b.String())
	end()
	fmt.Fprintf(env.Stdout, "appended to %s\n", path)
	return recErr
}

// identityRunner runs a short command and writes its output as a section.
func identityRunner(ctx context.Context, env *Env, w *identityWriter) func(title, name string, args ...string) string {
	return func(title, name string, args ...string) string {
		w.section(title)
		out, err := env.runCapture(ctx, identityTimeout, name, args...)
		w.text(out.Stdout)
		if err != nil {
			w.linef("%v", err)
		}
		return out.Stdout
	}
}

// BuildIdentity returns the text of system_identity.txt.
func BuildIdentity(ctx context.Context, env *Env, opts IdentityOptions) string {
	w := &identityWriter{}
	run := identityRunner(ctx, env, w)
	file := func(title, path string) string {
		w.section(title)
		b, err := os.ReadFile(env.sysPath(path))
		if err != nil {
			w.linef("%s: %s", path, describeReadError(err))
			return ""
		}
		w.text(string(b))
		return string(b)
	}

	run("uname -a", "uname", "-a")
	file("/etc/os-release", "/etc/os-release")
	run("nvidia-smi", "nvidia-smi")
	query := run("nvidia-smi -q", "nvidia-smi", "-q")

	version := file("/proc/driver/nvidia/version", "/proc/driver/nvidia/version")
	w.linef("kernel module: %s", kernelModuleFlavor(version))

	w.section("HMM / unified memory")
	if mode := addressingMode(query); mode != "" {
		w.linef("nvidia-smi -q Addressing Mode: %s", mode)
	} else {
		w.linef("nvidia-smi -q Addressing Mode: not reported")
	}
	w.linef("CUDA device attributes (cuDeviceGetAttribute through %s):", opts.Python)
	out, err := env.runCapture(ctx, identityTimeout, opts.Python, "-c", hmmProbe)
	if err != nil {
		w.linef("unavailable: %v", err)
	} else {
		w.text(out.Stdout)
	}
	w.linef("nvidia_uvm module parameters (/sys/module/nvidia_uvm/parameters):")
	w.text(uvmParameters(env))

	writeToolchain(ctx, env, opts, w, run)

	w.section("debugflow-step")
	w.linef("debugflow-step %s", dfversion.Get().String())

	w.section("runner image")
	imageOS, imageVersion := env.Getenv("ImageOS"), env.Getenv("ImageVersion")
	if imageOS == "" && imageVersion == "" {
		w.linef("ImageOS/ImageVersion: not set")
	} else {
		w.linef("ImageOS=%s ImageVersion=%s", imageOS, imageVersion)
	}
	if b, err := os.ReadFile(env.sysPath("/imagegeneration/imagedata.json")); err == nil {
		w.linef("/imagegeneration/imagedata.json:")
		w.text(string(b))
	} else {
		w.linef("/imagegeneration/imagedata.json: %s", describeReadError(err))
	}
	return w.b.String()
}

// writeToolchain writes the sections that change when the job installs things: the
// sanitizer's version, the Python version and its installed packages.
func writeToolchain(ctx context.Context, env *Env, opts IdentityOptions, w *identityWriter, run func(title, name string, args ...string) string) {
	w.section("compute-sanitizer --version")
	if path, err := FindSanitizer(env, opts.Sanitizer); err != nil {
		w.linef("compute-sanitizer: not found")
	} else {
		w.linef("path: %s", path)
		out, err := env.runCapture(ctx, identityTimeout, path, "--version")
		w.text(out.Stdout)
		if err != nil {
			w.linef("%v", err)
		}
	}

	run("python --version ("+opts.Python+")", opts.Python, "--version")
	w.section("installed packages (" + opts.Python + ", as pip freeze lists them)")
	out, err := env.runCapture(ctx, identityTimeout, opts.Python, "-c", installedPackagesScript)
	if err != nil {
		// The script failed (an interpreter too old for it, say): ask pip.
		out, err = env.runCapture(ctx, identityTimeout, opts.Python, "-m", "pip", "freeze")
	}
	w.text(out.Stdout)
	if err != nil {
		w.linef("%v", err)
	}
}

// installedPackagesScript prints what `pip freeze` prints, one "name==version" line per
// installed distribution (sorted, the first on sys.path winning, as pip does), "name @ url"
// for one installed from a URL and pip's two lines for an editable install ("-e path"; pip
// names the commit of one in a git checkout, this does not). It finds the distributions as
// importlib.metadata does (every *.dist-info and *.egg-info in each folder of sys.path, ""
// being the current one, and an .egg's EGG-INFO), but reads only the Name and Version
// headers: importlib.metadata imports the email package and parses each METADATA file whole
// (twice, for the name and the version), 108 ms against 33 ms for 36 distributions, where a
// bare interpreter takes 30 ms and pip freeze 494 ms (BenchmarkInstalledPackages). It works where the job's
// interpreter has no pip (Debian's python3 without python3-pip). Unlike pip freeze it also
// lists pip, setuptools and wheel: what the build ran with. It reads at most the first MiB
// of a file: the headers come first, and a package's description may be megabytes long.
const installedPackagesScript = `import os, sys
def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)
    except OSError:
        return None
def header(text, key):
    for line in text.split("\n\n", 1)[0].split("\n"):
        if line[:1] in (" ", "\t"):
            continue
        k, sep, v = line.partition(":")
        if sep and k.strip().lower() == key:
            return v.strip()
    return None
seen, lines = set(), []
for base in sys.path:
    root = base or "."
    try:
        children = os.listdir(root)
    except OSError:
        continue
    infos = [c for c in children if c.lower().endswith((".dist-info", ".egg-info"))]
    if base.endswith(".egg"):
        infos += [c for c in children if c.lower() == "egg-info"]
    for child in infos:
        path = os.path.join(root, child)
        if os.path.isdir(path):
            text = read(os.path.join(path, "METADATA")) or read(os.path.join(path, "PKG-INFO")) or ""
        else:
            text = read(path) or ""
        name = header(text, "name")
        if not name:
            continue
        key = name.lower().replace("_", "-").replace(".", "-")
        while "--" in key:
            key = key.replace("--", "-")
        if key in seen:
            continue
        seen.add(key)
        line = "%s==%s" % (name, header(text, "version"))
        url = read(os.path.join(path, "direct_url.json")) if os.path.isdir(path) else None
        if url:
            import json, urllib.parse
            try:
                url = json.loads(url)
            except ValueError:
                url = None
        if isinstance(url, dict) and isinstance(url.get("url"), str):
            if (url.get("dir_info") or {}).get("editable"):
                where = url["url"]
                if where.startswith("file:"):
                    where = urllib.parse.unquote(urllib.parse.urlsplit(where).path)
                line = "# Editable install with no version control (%s)\n-e %s" % (line, where)
            else:
                line = "%s @ %s" % (name, url["url"])
        lines.append((key, line))
for _, line in sorted(lines):
    print(line)
`

// kernelModuleFlavor tells the open GPU kernel module from the proprietary
// one by the banner in /proc/driver/nvidia/version.
func kernelModuleFlavor(version string) string {
	switch {
	case version == "":
		return "unknown (no NVIDIA driver loaded)"
	case strings.Contains(version, "Open Kernel Module"):
		return `open ("Open Kernel Module" in /proc/driver/nvidia/version)`
	default:
		return "proprietary (no \"Open Kernel Module\" in /proc/driver/nvidia/version)"
	}
}

// addressingMode returns the "Addressing Mode" field of nvidia-smi -q
// (HMM, ATS or None on recent drivers).
func addressingMode(query string) string {
	for _, l := range strings.Split(query, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.TrimSpace(k) == "Addressing Mode" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// uvmParameters lists /sys/module/nvidia_uvm/parameters/* as name = value.
func uvmParameters(env *Env) string {
	dir := env.sysPath("/sys/module/nvidia_uvm/parameters")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "nvidia_uvm: " + describeReadError(err) + " (module not loaded?)"
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		v, err := os.ReadFile(filepath.Join(dir, n))
		val := strings.TrimSpace(string(v))
		if err != nil {
			val = "(" + describeReadError(err) + ")"
		}
		fmt.Fprintf(&b, "%s = %s\n", n, val)
	}
	if b.Len() == 0 {
		return "nvidia_uvm: no parameters"
	}
	return b.String()
}

func describeReadError(err error) string {
	switch {
	case os.IsNotExist(err):
		return "not found"
	case os.IsPermission(err):
		return "permission denied"
	default:
		return err.Error()
	}
}
