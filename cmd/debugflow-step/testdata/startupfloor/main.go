// Command startupfloor links what debugflow-step cannot do without (go-githubactions for
// outputs and summaries, which imports net/http; an HTTPS client, which the gate fetches the
// actor's SSH keys from GitHub with; cobra; the early signal catch) and does nothing else: the
// floor under the step binary's start-up in BenchmarkStartup.
package main

import (
	"net/http"
	"os"

	"github.com/sethvargo/go-githubactions"
	"github.com/spf13/cobra"

	_ "github.com/debugflow/debugflow/internal/earlysignal"
)

func main() {
	if len(os.Args) > 1 { // never in the benchmark: keeps the libraries' code linked
		githubactions.New().SetOutput("x", os.Args[1])
		_ = (&cobra.Command{Use: "x"}).Execute()
		if resp, err := http.Get(os.Args[1]); err == nil {
			resp.Body.Close()
		}
	}
}
