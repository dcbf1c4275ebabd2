// Command dmesg is a test double of util-linux dmesg. It prints the file
// named by $FAKE_DMESG_FILE as the kernel ring buffer; the file may grow
// (or lose its head, like a rotating ring buffer) while a test runs.
// --ctime/-T and --nopager are accepted; other options are rejected.
// $FAKE_DMESG_DENY=1 imitates kernel.dmesg_restrict for a non-root user.
package main

import (
	"fmt"
	"os"
)

func main() {
	for _, a := range os.Args[1:] {
		switch a {
		case "--ctime", "-T", "--nopager", "-P":
		default:
			fmt.Fprintf(os.Stderr, "dmesg: unrecognized option '%s'\n", a)
			os.Exit(1)
		}
	}
	if os.Getenv("FAKE_DMESG_DENY") == "1" {
		fmt.Fprintln(os.Stderr, "dmesg: read kernel buffer failed: Operation not permitted")
		os.Exit(1)
	}
	b, err := os.ReadFile(os.Getenv("FAKE_DMESG_FILE"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "dmesg: read kernel buffer failed: %v\n", err)
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
