package spec

import (
	"errors"
	"strings"
	"testing"
)

// TestStepBinaryValidation covers every step_binary rule: one spec per case, the errors it
// must produce (each a substring of one error, in order), none when want is empty.
func TestStepBinaryValidation(t *testing.T) {
	sum := strings.Repeat("0a", 32)
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"default: debugflow chooses", ``, nil},
		{"bundle arm64 in another folder", `{delivery: bundle, arch: arm64, dir: tools/debugflow}`, nil},
		{"release of this debugflow", `{delivery: release}`, nil},
		{"release of another version with its checksums", `{delivery: release, version: v0.3.1, sha256: {x64: ` + sum + `, arm64: ` + sum + `}}`, nil},
		{"release from a local mirror", `{delivery: release, base_url: "http://127.0.0.1:8080/dl"}`, nil},
		{"go install at a commit", `{delivery: go-install, version: 0123456789abcdef0123456789abcdef01234567}`, nil},
		{"path, delivery implied", `{path: ./cmd/debugflow-step}`, nil},
		{"path, delivery written", `{delivery: path, path: cmd/debugflow-step}`, nil},

		{"unknown delivery", `{delivery: download}`, []string{`step_binary.delivery: want one of bundle, release, go-install, path`}},
		{"version without a delivery", `{version: v0.2.0}`, []string{"step_binary.version: say how to get version v0.2.0"}},
		{"unpinned", `{version: latest}`, []string{`step_binary.version: "latest" is not pinned`}},
		{"bundle with a version", `{delivery: bundle, version: v0.2.0}`, []string{"a bundle is always this debugflow's own version"}},
		{"release of a commit", `{delivery: release, version: 0123456789abcdef0123456789abcdef01234567}`, []string{"want a release version such as v0.2.0"}},
		{"go install of a short version", `{delivery: go-install, version: v1.2}`, []string{"want a full version such as v0.2.0 or a 40-character commit SHA"}},
		{"go install without a module", `{delivery: go-install, module: "", version: v0.2.0}`, []string{"step_binary.module: name the Go module"}},
		{"path and version", `{path: ./x, version: v0.2.0}`, []string{"give version (go install) or path"}},
		{"path with bundle", `{delivery: bundle, path: ./x}`, []string{"step_binary.path: path builds from the checkout"}},
		{"path outside the checkout", `{path: ../x}`, []string{"want a path inside the checkout"}},
		{"path with shell characters", `{path: "./x;rm -rf ~"}`, []string{"want a path inside the checkout"}},
		{"delivery path without a path", `{delivery: path}`, []string{"delivery path needs the folder"}},
		{"arch in GitHub's case", `{arch: X64}`, []string{`step_binary.arch: want x64 or arm64`}},
		{"bundle dir absolute", `{delivery: bundle, dir: /opt/bin}`, []string{"step_binary.dir: want a folder of the debug branch"}},
		{"bundle dir outside", `{dir: ../bin}`, []string{"step_binary.dir: want a folder of the debug branch"}},
		{"bundle dir with an expression", `{dir: "${{ github.ref }}"}`, []string{"step_binary.dir: want a folder of the debug branch"}},
		{"bundle dir in workflows", `{dir: .github/workflows/bin}`, []string{"keep the bundle out of .github/workflows"}},
		{"base url over http", `{delivery: release, base_url: "http://mirror.example.com/dl"}`, []string{"want https://"}},
		{"base url with credentials", `{base_url: "https://user:pw@mirror.example.com/dl"}`, []string{"without credentials"}},
		{"base url with a query", `{base_url: "https://mirror.example.com/dl?x=1"}`, []string{"without credentials, query or fragment"}},
		{"base url with shell", "{base_url: \"https://mirror.example.com/$(id)\"}", []string{"want an absolute URL"}},
		{"base url relative", `{base_url: "/dl"}`, []string{"want an absolute URL"}},
		{"checksums without release", `{sha256: {x64: ` + sum + `}}`, []string{"step_binary.sha256: checksums pin release archives"}},
		{"checksum of an unknown arch", `{delivery: release, sha256: {amd64: ` + sum + `}}`, []string{`step_binary.sha256.amd64: unknown key "amd64"`}},
		{"checksum not hex", `{delivery: release, sha256: {x64: ABC}}`, []string{"step_binary.sha256.x64: want 64 lower-case hex digits"}},
		{"unknown key", `{deliver: bundle}`, []string{`unknown key "deliver"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "runners: [gpu]\nreproducer: {paths: [t]}\n"
			if tt.yaml != "" {
				doc += "step_binary: " + tt.yaml + "\n"
			}
			s, err := Parse("s.yaml", []byte(doc))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected errors:\n%v", err)
				}
				if s.StepBinary.Pinned != nil {
					t.Errorf("Pinned = %v after loading; only debugflow generate fills it", s.StepBinary.Pinned)
				}
				return
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want spec.Errors, got %v", err)
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("want %d error(s) %q, got:\n%v", len(tt.want), tt.want, err)
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}
