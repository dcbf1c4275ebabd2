package siblings

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A sibling that is a symbolic link (link.yml -> ci.yml) is renamed itself,
// its target text unchanged: disable leaves link.yml.disabled -> ci.yml
// (dangling once ci.yml is disabled too), and enable, with or without
// --all, puts both back as they were.
func TestSymlinkSiblingRoundTrip(t *testing.T) {
	for _, all := range []bool{false, true} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"ci.yml": "ci", "debug.yml": "d"})
		for name, target := range map[string]string{"link.yml": "ci.yml", "abs.yaml": "/etc/hostname", "gone.yml": "nowhere.yml"} {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		before := readTree(t, dir)
		opts := Options{Dir: dir, Keep: []string{"debug.yml"}, Git: noGit{}}
		if _, err := Disable(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		got := readTree(t, dir)
		delete(got, ManifestName)
		want := map[string]string{"ci.yml.disabled": "ci", "debug.yml": "d", "link.yml.disabled": "-> ci.yml",
			"abs.yaml.disabled": "-> /etc/hostname", "gone.yml.disabled": "-> nowhere.yml"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("after disable (-want +got):\n%s", diff)
		}
		opts.All = all
		if _, err := Enable(context.Background(), opts); err != nil {
			t.Fatalf("enable (--all %v): %v", all, err)
		}
		if diff := cmp.Diff(before, readTree(t, dir)); diff != "" {
			t.Errorf("enable (--all %v) did not restore (-want +got):\n%s", all, diff)
		}
	}
}

// A listed workflow whose content changed since disable recorded it was
// switched off by someone else: enable leaves it disabled, says why, and
// still enables the rest; disable drops it from the record.
func TestStaleFingerprintStaysDisabled(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"ci.yml": "ci", "nightly.yml": "nightly v1"})
	if _, err := Disable(context.Background(), Options{Dir: dir, Git: noGit{}}); err != nil {
		t.Fatal(err)
	}
	// Someone enabled nightly by hand, changed it, and turned it off again on purpose.
	writeTree(t, dir, map[string]string{"nightly.yml.disabled": "nightly v2, off until the runner is fixed"})

	var dry bytes.Buffer
	if _, err := Disable(context.Background(), Options{Dir: dir, Git: noGit{}, DryRun: true, Out: &dry}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dry.String(), "dropped from the record, so enable leaves them disabled: nightly.yml.disabled (changed since debugflow disable recorded it)") ||
		!strings.Contains(dry.String(), "would write") {
		t.Errorf("disable does not drop the stale entry:\n%s", dry.String())
	}

	var out bytes.Buffer
	actions, err := Enable(context.Background(), Options{Dir: dir, Git: noGit{}, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	wantActions := []Action{
		{From: filepath.Join(dir, "ci.yml.disabled"), To: filepath.Join(dir, "ci.yml"), Status: StatusRenamed},
		{From: filepath.Join(dir, "nightly.yml.disabled"), Status: StatusStale},
	}
	if diff := cmp.Diff(wantActions, actions); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "does not describe these any more, so they stay disabled: nightly.yml.disabled (changed since debugflow disable recorded it)") {
		t.Errorf("enable does not say why nightly stays disabled:\n%s", out.String())
	}
	want := map[string]string{"ci.yml": "ci", "nightly.yml.disabled": "nightly v2, off until the runner is fixed"}
	if diff := cmp.Diff(want, readTree(t, dir)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}

// The stale record of the issue, with real Git: the debug branch's record
// was committed, the workflows were then re-enabled by hand without
// deleting it, and later nightly.yml was disabled on purpose, unchanged. The
// record still lists it with the right fingerprint, but Git shows it was
// disabled after the record's commit: enable must not switch it on, and a
// new disable must not carry the entry over.
func TestStaleCommittedRecordDoesNotEnable(t *testing.T) {
	root := gitRepo(t, map[string]string{"ci.yml": "ci", "nightly.yml": "nightly", "debug.yml": "d"}, nil)
	wf := filepath.Join(root, ".github", "workflows")
	ctx := context.Background()
	if _, err := Disable(ctx, Options{Dir: wf, Keep: []string{"debug.yml"}}); err != nil {
		t.Fatal(err)
	}
	git(t, root, "commit", "-q", "-m", "debug: disable siblings")
	git(t, wf, "mv", "ci.yml.disabled", "ci.yml")
	git(t, wf, "mv", "nightly.yml.disabled", "nightly.yml")
	git(t, root, "commit", "-q", "-m", "re-enable by hand (the record stays behind)")
	git(t, wf, "mv", "nightly.yml", "nightly.yml.disabled")
	git(t, root, "commit", "-q", "-m", "nightly off until the runner is fixed")

	var out bytes.Buffer
	actions, err := Enable(ctx, Options{Dir: wf, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		if filepath.Base(a.From) == "nightly.yml.disabled" && a.Status != StatusStale {
			t.Errorf("nightly.yml.disabled: %q, want %q\n%s", a.Status, StatusStale, out.String())
		}
	}
	if !strings.Contains(out.String(), "nightly.yml.disabled (disabled in commit ") || !strings.Contains(out.String(), "after the record's last commit") {
		t.Errorf("enable does not say why:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(wf, "nightly.yml.disabled")); err != nil {
		t.Errorf("nightly was switched on: %v", err)
	}

	// Staged but not committed: the same.
	git(t, root, "reset", "-q", "--hard", "HEAD~1")
	git(t, wf, "mv", "nightly.yml", "nightly.yml.disabled")
	out.Reset()
	if _, err := Disable(ctx, Options{Dir: wf, Keep: []string{"debug.yml"}, DryRun: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "dropped from the record, so enable leaves them disabled: nightly.yml.disabled (disabled after the record was committed (staged, not committed yet))") {
		t.Errorf("disable carries the stale entry over:\n%s", out.String())
	}

	// The record written and committed together with the renames is trusted.
	git(t, root, "reset", "-q", "--hard", "HEAD~1")
	if _, err := Enable(ctx, Options{Dir: wf}); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, wf); len(got) != 3 || got["nightly.yml"] != "nightly" || got["ci.yml"] != "ci" {
		t.Errorf("a fresh record was not trusted: %v", got)
	}
}
