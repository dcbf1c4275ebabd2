// Command mkrelease builds debugflow's release assets (package release) and, with --compare,
// checks that a second build is byte for byte the same. The release workflow runs:
//
//	go run ./internal/release/mkrelease --version "$TAG" --revision "$SHA" --out dist
//	go run ./internal/release/mkrelease --version "$TAG" --revision "$SHA" --out dist2 --compare dist
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the parsed flags.
type options struct {
	release.Options
	Compare string
}

// parse reads the flags; the error is a usage error.
func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("mkrelease", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Version, "version", "", "the release tag, e.g. v0.2.0 (required)")
	fs.StringVar(&o.Revision, "revision", "", "the full commit SHA the tag points to (required)")
	fs.StringVar(&o.Out, "out", "dist", "empty folder for the archives and "+dist.ChecksumsFile)
	fs.StringVar(&o.Dir, "dir", ".", "the debugflow module to build")
	platforms := fs.String("platforms", "", "comma-separated GOOS/GOARCH (default: every release platform)")
	fs.StringVar(&o.Compare, "compare", "", "after the build, fail unless `DIR` holds the same files, byte for byte")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Version == "" || o.Revision == "" {
		return nil, errors.New("--version and --revision are required")
	}
	if *platforms != "" {
		for _, p := range strings.Split(*platforms, ",") {
			goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
			if !ok || goos == "" || goarch == "" {
				return nil, fmt.Errorf("--platforms: %q is not GOOS/GOARCH", p)
			}
			o.Platforms = append(o.Platforms, dist.Platform{GOOS: goos, GOARCH: goarch})
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "mkrelease:", err)
		}
		return 2
	}
	o.Log = stdout
	if _, err := release.Build(ctx, o.Options); err != nil {
		fmt.Fprintln(stderr, "mkrelease:", err)
		return 1
	}
	if o.Compare != "" {
		if err := release.Compare(o.Compare, o.Out); err != nil {
			fmt.Fprintln(stderr, "mkrelease:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s and %s are the same, byte for byte\n", o.Compare, o.Out)
	}
	return 0
}
