package siblings

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestManifestFormat pins the file a user sees and a commit carries.
func TestManifestFormat(t *testing.T) {
	fp := "sha256:" + strings.Repeat("ab", 32)
	got := string(renderManifest(map[string]string{"release.yaml": fp, "ci.yml": fp, "b c.yml": fp, "old.yml": ""}))
	want := "# Workflows that `debugflow disable` renamed to <name>.disabled, with a fingerprint of what it renamed; `debugflow enable` renames exactly these back if they are unchanged, then deletes this file.\n" +
		fp + "  b c.yml\n" +
		fp + "  ci.yml\n" +
		"old.yml\n" +
		fp + "  release.yaml\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	if strings.Count(manifestHeader, "\n") != 1 || !strings.HasPrefix(manifestHeader, "#") {
		t.Errorf("the header must be one comment line: %q", manifestHeader)
	}
}

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{name: "written by disable", in: manifestOf("ci.yml=c", "release.yaml=r"), want: []string{"ci.yml", "release.yaml"}},
		{name: "without fingerprints (older versions)", in: manifestOf("ci.yml", "release.yaml"), want: []string{"ci.yml", "release.yaml"}},
		{name: "a name after a fingerprint keeps its spaces", in: fingerprintOf("x") + "  a b .yml\n", want: []string{"a b .yml"}},
		{name: "a short fingerprint is part of the name", in: "sha256:abc  a.yml\n", want: []string{"sha256:abc  a.yml"}},
		{name: "header only", in: manifestHeader, want: []string{}},
		{name: "empty file", in: "", want: []string{}},
		{name: "no final newline", in: "a.yml", want: []string{"a.yml"}},
		{name: "CRLF, blank lines, comments, duplicates", in: "# x\r\n\r\na.yml\r\n  # not a comment.yml\r\na.yml\r\n#b.yml\r\n",
			want: []string{"  # not a comment.yml", "a.yml"}},
		{name: "a disabled name", in: "a.yml\nb.yml.disabled\n", wantErr: `line 2: "b.yml.disabled" is not a workflow file name`},
		{name: "a path", in: "sub/a.yml\n", wantErr: `line 1: "sub/a.yml" is not a workflow file name`},
		{name: "an extension alone", in: ".yaml\n", wantErr: `line 1: ".yaml" is not a workflow file name`},
		{name: "trailing space", in: "a.yml \n", wantErr: `line 1: "a.yml " is not a workflow file name`},
		{name: "NUL byte", in: "a\x00.yml\n", wantErr: `is not a workflow file name`},
		{name: "line too long", in: strings.Repeat("a", maxManifestLine+1) + ".yml\n", wantErr: "token too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseManifest(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, sortedNames(got)); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseManifest: parsing never panics; what it accepts is a set of
// workflow file names that survives a render and a second parse unchanged.
func FuzzParseManifest(f *testing.F) {
	for _, seed := range []string{manifestOf("ci.yml=c", "release.yaml"), "", "a.yml\r\n#x\n\n", "a/b.yml\n", "x.yml.disabled", "\xff.yml\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		names, err := parseManifest(strings.NewReader(in))
		if err != nil {
			return
		}
		for n := range names {
			if !isWorkflow(n) || strings.ContainsAny(n, "/\x00\n") || !recordable(n) {
				t.Fatalf("accepted %q from %q", n, in)
			}
		}
		again, err := parseManifest(strings.NewReader(string(renderManifest(names))))
		if err != nil {
			t.Fatalf("the rendering of %v does not parse: %v", sortedNames(names), err)
		}
		if diff := cmp.Diff(names, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
