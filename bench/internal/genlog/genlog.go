// Package genlog is what the benchmarks' log generators (genpytestlog, gensanlog) share: the
// program's exit on error and the buffered write of the generated file.
package genlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// Main runs run with the command line and the standard streams and exits 1, naming the
// program, when it fails.
func Main(name string, run func(args []string, stdout, stderr io.Writer) error) {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// WriteFile creates path and lets write fill it through a 1 MiB buffer; the buffer is flushed
// and the file closed, and any error names the file.
func WriteFile(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
