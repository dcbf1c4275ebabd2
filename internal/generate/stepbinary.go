package generate

import (
	"fmt"
	"path"
	"strings"

	"github.com/debugflow/debugflow/internal/dist"
	"github.com/debugflow/debugflow/internal/spec"
	"github.com/debugflow/debugflow/workflow"
)

// The step binary's install (docs/release.md). bundle and release verify a SHA-256 pinned in
// the workflow before the binary runs, and install it to binDir, which joins the PATH of the
// later steps; go-install and path compile it with setup-go.
const (
	// InstallStepName is the step that puts debugflow-step on the PATH.
	InstallStepName = "Install debugflow-step"
	// BundleCheckoutStepName checks out the bundled binary from the workflow's own commit.
	BundleCheckoutStepName = "Check out the bundled debugflow-step"
	// BundleCheckoutDir is where that checkout goes inside the workspace; the install step
	// removes it once the binary is copied out, so the project's tree stays as checked out.
	BundleCheckoutDir = ".debugflow-bundle"
)

// Env names of the install step; values reach the script only through them.
const (
	envStepSHA256  = "DEBUGFLOW_STEP_SHA256"
	envStepMachine = "DEBUGFLOW_STEP_MACHINE"
	envStepBundle  = "DEBUGFLOW_STEP_BUNDLE"
	envStepURL     = "DEBUGFLOW_STEP_URL"
)

// checkMachine stops a job whose runner is not the architecture the binary was built for.
const checkMachine = `if [ "$(uname -m)" != "$DEBUGFLOW_STEP_MACHINE" ]; then
  echo "::error title=Install debugflow-step::this runner is $(uname -m), the workflow installs debugflow-step for $DEBUGFLOW_STEP_MACHINE: set step_binary.arch in the spec and run debugflow generate again"
  exit 1
fi
bin="$RUNNER_TEMP/debugflow-step-bin"
mkdir -p "$bin"
`

// BundleInstallScript installs the bundled binary: copy it out of the checkout, check the
// copy's SHA-256 against the workflow, and only then make it executable and put it on PATH.
const BundleInstallScript = checkMachine + `if [ ! -f "$DEBUGFLOW_STEP_BUNDLE" ]; then
  echo "::error title=Bundled debugflow-step is missing::$DEBUGFLOW_STEP_BUNDLE is not in this commit: commit the bundle debugflow generate wrote together with the workflow"
  exit 1
fi
cp "$DEBUGFLOW_STEP_BUNDLE" "$bin/debugflow-step"
rm -rf ` + BundleCheckoutDir + `
sum="$(sha256sum "$bin/debugflow-step" | cut -d ' ' -f 1)"
if [ "$sum" != "$DEBUGFLOW_STEP_SHA256" ]; then
  rm -f "$bin/debugflow-step"
  echo "::error title=Bundled debugflow-step does not match the workflow::the SHA-256 of $DEBUGFLOW_STEP_BUNDLE is $sum but the workflow pins $DEBUGFLOW_STEP_SHA256. The job stops here rather than run an unverified binary: run debugflow generate again and commit the workflow and the bundle together."
  exit 1
fi
chmod 755 "$bin/debugflow-step"
"$bin/debugflow-step" --version
echo "$bin" >> "$GITHUB_PATH"
`

// ReleaseInstallScript downloads the release archive (bounded in time), checks its SHA-256
// against the workflow, and only then extracts the binary and puts it on PATH.
const ReleaseInstallScript = checkMachine + `archive="$RUNNER_TEMP/debugflow-step.tar.gz"
curl --fail --silent --show-error --location --retry 3 --connect-timeout 20 --max-time 300 --output "$archive" "$DEBUGFLOW_STEP_URL"
sum="$(sha256sum "$archive" | cut -d ' ' -f 1)"
if [ "$sum" != "$DEBUGFLOW_STEP_SHA256" ]; then
  rm -f "$archive"
  echo "::error title=debugflow-step download does not match the workflow::the SHA-256 of $DEBUGFLOW_STEP_URL is $sum but the workflow pins $DEBUGFLOW_STEP_SHA256. The job stops here rather than run an unverified binary: check step_binary.base_url and step_binary.sha256."
  exit 1
fi
tar -xzf "$archive" -C "$bin" debugflow-step
rm -f "$archive"
"$bin/debugflow-step" --version
echo "$bin" >> "$GITHUB_PATH"
`

// InstallScripts are the scripts of the bundle and release install steps, for runners and
// tests that recognise them.
func InstallScripts() []string { return []string{BundleInstallScript, ReleaseInstallScript} }

// ReleaseURL is where delivery release downloads the step binary archive for r.
func ReleaseURL(sb spec.StepBinary, r dist.Runner) string {
	return strings.TrimSuffix(sb.BaseURL, "/") + "/" + sb.Version + "/" + dist.ArchiveName(dist.Step, sb.Version, r.Platform())
}

// stepBinarySteps are the steps that put debugflow-step on the PATH of a job's later steps,
// on a runner of the given architecture (the debug jobs: step_binary.arch; the report job:
// x64). s must be resolved: Delivery set, and for bundle and release the Pinned checksum.
func (b *builder) stepBinarySteps(arch string) ([]workflow.Step, error) {
	sb := b.s.StepBinary
	r, err := dist.RunnerFor(arch)
	if err != nil {
		return nil, fmt.Errorf("generate: step_binary.arch: %w", err)
	}
	sum := sb.Pinned[arch]
	switch sb.Delivery {
	case spec.DeliveryBundle, spec.DeliveryRelease:
		if sum == "" {
			return nil, fmt.Errorf("generate: step_binary: no SHA-256 pinned for the %s %s of debugflow-step (debugflow generate pins it; see docs/release.md)", arch, sb.Delivery)
		}
	case spec.DeliveryGoInstall, spec.DeliveryPath:
	case "":
		return nil, fmt.Errorf("generate: step_binary.delivery is not chosen yet: debugflow generate chooses bundle or release (package stepbin)")
	default:
		return nil, fmt.Errorf("generate: step_binary.delivery %q is unknown", sb.Delivery)
	}
	install := workflow.Step{Name: InstallStepName, Shell: "bash"}
	switch sb.Delivery {
	case spec.DeliveryBundle:
		install.Env = workflow.Env{
			{Name: envStepBundle, Value: path.Join(BundleCheckoutDir, dist.BundlePath(sb.Dir, r))},
			{Name: envStepSHA256, Value: sum},
			{Name: envStepMachine, Value: r.Machine},
		}
		install.Run = BundleInstallScript
		return []workflow.Step{b.bundleCheckoutStep(dist.BundlePath(sb.Dir, r)), install}, nil
	case spec.DeliveryRelease:
		install.Env = workflow.Env{
			{Name: envStepURL, Value: ReleaseURL(sb, r)},
			{Name: envStepSHA256, Value: sum},
			{Name: envStepMachine, Value: r.Machine},
		}
		install.Run = ReleaseInstallScript
		return []workflow.Step{install}, nil
	}
	var sc script
	if sb.Delivery == spec.DeliveryPath {
		sc.add(newCommand("go", "build", "-o").shell(`"$(go env GOPATH)/bin/` + stepBinary + `"`).args("./" + path.Clean(sb.Path)))
	} else {
		sc.add(newCommand("go", "install").args(sb.Module + "/cmd/" + stepBinary + "@" + sb.Version))
	}
	sc.lines = append(sc.lines, `echo "$(go env GOPATH)/bin" >> "$GITHUB_PATH"`)
	return []workflow.Step{b.setupGoStep(), runStep(workflow.Step{Name: InstallStepName}, &sc)}, nil
}

// bundleCheckoutStep checks out only the bundled binary of the workflow's own commit (the
// project checkout may be another repository or ref) into BundleCheckoutDir.
func (b *builder) bundleCheckoutStep(file string) workflow.Step {
	return workflow.Step{
		Name: BundleCheckoutStepName,
		Uses: Checkout.Uses(),
		With: workflow.With{
			{Key: "path", Value: workflow.Str(BundleCheckoutDir)},
			{Key: "sparse-checkout", Value: workflow.Str("/" + file)},
			{Key: "sparse-checkout-cone-mode", Value: workflow.Bool(false)},
			{Key: "fetch-depth", Value: workflow.Int(1)},
			{Key: "persist-credentials", Value: workflow.Bool(false)},
		},
	}
}
