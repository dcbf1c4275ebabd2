package main

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// maxReadmeBytes is the front page's budget (issue 12: a README read in five minutes; the
// reference lives in docs/).
const maxReadmeBytes = 15 << 10

// The README is a front page: under 15 KB, and every page of docs/ is reachable from it by
// following links (the moved sections stay findable). Every relative link of the README and
// of docs/*.md names a file that exists and, for a Markdown file, a heading it has (GitHub's
// anchors), so a renamed heading or a lost one breaks this test, not a reader's click.
func TestReadmeFrontPageAndDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) >= maxReadmeBytes {
		t.Errorf("README.md is %d bytes, want under %d: move reference material to docs/", len(readme), maxReadmeBytes)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	docs := map[string]*mdDoc{} // by path relative to the repository root
	for _, p := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		docs[filepath.ToSlash(rel)] = parseMarkdown(src)
	}
	for name, d := range docs {
		for _, l := range d.links {
			if problem := checkLink(root, name, l, docs); problem != "" {
				t.Errorf("%s: link %q: %s", name, l, problem)
			}
		}
	}
	// Every docs page is reachable from the README.
	reached := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, l := range docs[name].links {
			target, _, ok := localTarget(name, l)
			if ok && docs[target] != nil && !reached[target] {
				reached[target] = true
				queue = append(queue, target)
			}
		}
	}
	for name := range docs {
		if !reached[name] {
			t.Errorf("%s is not reachable from README.md by links", name)
		}
	}
}

// localTarget resolves a relative link of the document name to a path from the repository
// root and its anchor; ok is false for a link elsewhere (a URL, mailto:).
func localTarget(name, link string) (target, anchor string, ok bool) {
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "", "", false
	}
	target = name
	if u.Path != "" {
		target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), u.Path)))
	}
	return target, u.Fragment, true
}

// checkLink says what is wrong with one link ("" when nothing).
func checkLink(root, name, link string, docs map[string]*mdDoc) string {
	if _, err := url.Parse(link); err != nil {
		return err.Error()
	}
	target, anchor, ok := localTarget(name, link)
	if !ok {
		return ""
	}
	if strings.HasPrefix(target, "../") {
		return "points outside the repository"
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
		return "no such file"
	}
	if anchor == "" || !strings.HasSuffix(target, ".md") {
		return ""
	}
	d := docs[target]
	if d == nil {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(target)))
		if err != nil {
			return err.Error()
		}
		d = parseMarkdown(src)
	}
	if !slices.Contains(d.anchors, anchor) {
		return fmt.Sprintf("%s has no heading with anchor #%s", target, anchor)
	}
	return ""
}

// mdDoc is what the link check needs of a Markdown document.
type mdDoc struct {
	links   []string // link destinations, in order
	anchors []string // the anchors GitHub gives its headings
}

// parseMarkdown reads a document as GitHub does (CommonMark and GFM): links in code are not
// links, and headings get GitHub's anchors.
func parseMarkdown(src []byte) *mdDoc {
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	d := &mdDoc{}
	seen := map[string]int{}
	_ = gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *gast.Link:
			d.links = append(d.links, string(n.Destination))
		case *gast.Heading:
			slug := githubSlug(plainText(n, src))
			if k := seen[slug]; k > 0 {
				d.anchors = append(d.anchors, fmt.Sprintf("%s-%d", slug, k))
			} else {
				d.anchors = append(d.anchors, slug)
			}
			seen[slug]++
		}
		return gast.WalkContinue, nil
	})
	return d
}

// plainText is the text of a node and its children, code spans included.
func plainText(n gast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *gast.Text:
			b.Write(c.Segment.Value(src))
		case *gast.String:
			b.Write(c.Value)
		default:
			b.WriteString(plainText(c, src))
		}
	}
	return b.String()
}

// githubSlug is the anchor GitHub gives a heading (github-slugger): lower case, letters,
// digits, marks, "_" and "-" kept, spaces become "-", everything else dropped.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestGithubSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Xid → worker → test":                              "xid--worker--test",
		"The step binary (step_binary)":                    "the-step-binary-step_binary",
		"`debugflow report --json` shape (report.Verdict)": "debugflow-report---json-shape-reportverdict",
		"Credentials: which token goes to which host":      "credentials-which-token-goes-to-which-host",
	} {
		if got := githubSlug(in); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

// readmeBlock is the first ```sh block after the README heading that starts with heading.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n"+heading)
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("README.md's %q section has no ```sh block", heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return strings.Split(strings.TrimSpace(block), "\n")
}

// command is a shell line without its trailing comment.
func command(line string) string {
	cmd, _, _ := strings.Cut(line, "#")
	return strings.TrimSpace(cmd)
}

// The README starts with the two commands a newcomer needs, in its first code block: generate
// the default workflow, run the tests (the apt line they need comes before the tests).
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	var cmds []string
	for _, l := range readmeBlock(t, "## On a fresh machine") {
		if c := command(l); c != "" && !strings.Contains(c, "apt-get install") {
			cmds = append(cmds, c)
		}
	}
	want := []string{"go run ./cmd/debugflow generate --default-spec", "go test ./..."}
	if !slices.Equal(cmds, want) {
		t.Errorf("the README's first block runs %q, want %q", cmds, want)
	}
}

// The README's install line works today, in this clone, with no release published: the
// installed debugflow prints its version and generates the default workflow with the bundled
// debugflow-step, which prints the same version. (The release lines after it need a published
// release and the network; internal/release tests the archives they download.)
func TestReadmeInstallWorksInAClone(t *testing.T) {
	t.Parallel()
	install := command(readmeBlock(t, "## Install")[0])
	if !strings.HasPrefix(install, "go install ./") {
		t.Fatalf("the README's first install line is %q: with no release published, a newcomer installs from the clone (go install ./cmd/debugflow)", install)
	}
	gobin := t.TempDir()
	args := strings.Fields(install)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", install, err, out)
	}
	debugflow := filepath.Join(gobin, "debugflow")
	out, err := exec.Command(debugflow, "--version").Output()
	first, _, _ := strings.Cut(string(out), "\n")
	if err != nil || !strings.HasPrefix(first, "debugflow ") {
		t.Fatalf("debugflow --version = %q, %v", out, err)
	}
	work := t.TempDir()
	gen := exec.Command(debugflow, "generate", "-o", ".github/workflows/debug_cuda_repro.yml")
	gen.Dir = work
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("the installed debugflow generate: %v\n%s", err, out)
	}
	step := filepath.Join(work, ".github", "debugflow", "debugflow-step-linux-"+runtime.GOARCH)
	if runtime.GOOS != "linux" {
		return
	}
	out, err = exec.Command(step, "--version").Output()
	stepFirst, _, _ := strings.Cut(string(out), "\n")
	if err != nil || stepFirst != strings.Replace(first, "debugflow ", "debugflow-step ", 1) {
		t.Errorf("the bundle says %q (%v), debugflow says %q: want the same version", stepFirst, err, first)
	}
}

// This repository's CI on GitHub runs the tests the way .ci/run does (the README's test
// command after the Debian packages it needs): a CI workflow with its own shorter apt list
// misses packages the tests need (ccache, Mermaid) and fails there.
func TestCIWorkflowRunsTheCIScript(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(src, &wf); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			runs = append(runs, strings.TrimSpace(s.Run))
		}
	}
	if !slices.Contains(runs, "bash .ci/run") {
		t.Errorf("no step of ci.yml runs `bash .ci/run`; its steps run %q", runs)
	}
	for _, r := range runs {
		if strings.Contains(r, "apt-get install") || regexp.MustCompile(`(?m)^go test\b`).MatchString(r) {
			t.Errorf("ci.yml installs packages or runs go test itself (%q): .ci/run does both, with the full list", r)
		}
	}
}
