//go:build !linux

package readfile

import "os"

func kernelFileKind(string) string       { return "" }
func openKernelFileKind(*os.File) string { return "" }
