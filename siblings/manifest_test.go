package siblings

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestManifestFormat pins the file a user sees and a commit carries.
func TestManifestFormat(t *testing.T) {
	got := string(renderManifest(map[string]bool{"release.yaml": true, "ci.yml": true, "b c.yml": true}))
	want := "# Workflows that `debugflow disable` renamed to <name>.disabled, one per line; `debugflow enable` renames exactly these back, then deletes this file.\n" +
		"b c.yml\n" +
		"ci.yml\n" +
		"release.yaml\n"
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
		{name: "written by disable", in: manifestOf("ci.yml", "release.yaml"), want: []string{"ci.yml", "release.yaml"}},
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
	for _, seed := range []string{manifestOf("ci.yml", "release.yaml"), "", "a.yml\r\n#x\n\n", "a/b.yml\n", "x.yml.disabled", "\xff.yml\n"} {
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
		if diff := cmp.Diff(sortedNames(names), sortedNames(again)); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
