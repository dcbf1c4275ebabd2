package spec

import (
	"fmt"
	"strings"
)

// branchNameProblem says why git would refuse name as a branch (git check-ref-format --branch,
// the rules of git-check-ref-format(1) for refs/heads/<name>), or "" when it takes it.
func branchNameProblem(name string) string {
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("it contains the control character %U", r)
		}
	}
	switch {
	case strings.HasPrefix(name, "-"):
		return "it starts with -"
	case name == "HEAD":
		return "HEAD is not a branch"
	case strings.Contains(name, ".."):
		return `it contains ".."`
	case strings.Contains(name, "@{"):
		return `it contains "@{"`
	case strings.ContainsAny(name, ` ~^:?*[\`):
		return `it contains a space or one of ~ ^ : ? * [ \`
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return "it starts or ends with /"
	case strings.Contains(name, "//"):
		return `it contains "//"`
	case strings.HasSuffix(name, "."):
		return "it ends with ."
	}
	for _, part := range strings.Split(name, "/") {
		switch {
		case strings.HasPrefix(part, "."):
			return fmt.Sprintf("its part %q starts with .", part)
		case strings.HasSuffix(part, ".lock"):
			return fmt.Sprintf("its part %q ends with .lock", part)
		}
	}
	return ""
}
