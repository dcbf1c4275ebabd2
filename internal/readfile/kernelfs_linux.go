//go:build linux

package readfile

import (
	"os"
	"syscall"
)

// kernelFS are the file systems whose "regular files" are kernel interfaces: /proc/kmsg
// reads like an empty regular file and then blocks until the kernel logs something (and
// consumes what it returns), a /sys or debugfs file can act when read. No artifact or state
// file lives there, so none is opened. Values from linux/magic.h. An array, not a map: it
// is laid out by the linker, where a map is built by code at every start-up.
var kernelFS = [...]struct {
	magic uint32
	name  string
}{
	{0x9fa0, "procfs"},
	{0x62656572, "sysfs"},
	{0x64626720, "debugfs"},
	{0x74726163, "tracefs"},
	{0x73636673, "securityfs"},
	{0x27e0eb, "cgroup"},
	{0x63677270, "cgroup2"},
	{0xcafe4a11, "bpf"},
	{0x62656570, "configfs"},
	{0x6165676c, "pstore"},
	{0xde5e81e4, "efivarfs"},
}

// kernelFileKind names the kernel file system path is on (after following links), "" when
// it is not on one (or cannot tell).
func kernelFileKind(path string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return ""
	}
	return kernelKind(uint32(st.Type))
}

// openKernelFileKind is kernelFileKind for an open file (one swapped in after the check).
func openKernelFileKind(f *os.File) string {
	rc, err := f.SyscallConn()
	if err != nil {
		return ""
	}
	var st syscall.Statfs_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return ""
	}
	return kernelKind(uint32(st.Type))
}

func kernelKind(magic uint32) string {
	for _, fs := range kernelFS {
		if fs.magic == magic {
			return "a kernel interface on " + fs.name
		}
	}
	return ""
}
