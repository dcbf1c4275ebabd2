// Command startupfloor links what debugflow cannot do without (actionlint for validation,
// go-github for dispatch, goccy/go-yaml for emission, cobra, the early signal catch) and does
// nothing else: the floor under debugflow's start-up in BenchmarkStartup.
package main

import (
	"io"
	"os"

	"github.com/goccy/go-yaml"
	"github.com/google/go-github/v60/github"
	"github.com/rhysd/actionlint"
	"github.com/spf13/cobra"

	_ "github.com/debugflow/debugflow/internal/earlysignal"
)

func main() {
	if len(os.Args) > 1 { // never in the benchmark: keeps the libraries' code and tables linked
		if l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{}); err == nil {
			_, _ = l.Lint("x.yml", []byte(os.Args[1]), nil)
		}
		_ = github.NewClient(nil)
		_, _ = yaml.Marshal(os.Args)
		_ = (&cobra.Command{Use: "x"}).Execute()
	}
}
