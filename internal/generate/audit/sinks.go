package audit

// codeInputs are the inputs of actions that run their value as code: GitHub pastes the
// ${{ }} expressions into the value before the action runs it, as it does for run:. Action
// names are lower case, as actionName returns them.
//
// https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#understanding-the-risk-of-script-injections
var codeInputs = []struct {
	action, input, language string
}{
	{githubScriptAction, "script", "javascript"},
	{"mikefarah/yq", "cmd", "shell"},
	{"amadevus/pwsh-script", "script", "powershell"},
	{"addnab/docker-run-action", "run", "shell"},
	{"azure/cli", "inlinescript", "shell"},
	{"azure/powershell", "inlinescript", "powershell"},
	{"appleboy/ssh-action", "script", "shell"},
	{"jannekem/run-python-script-action", "script", "python"},
	{"cardinalby/js-eval-action", "expression", "javascript"},
	{"nick-fields/retry", "command", "shell"},
	{"nick-invision/retry", "command", "shell"},
	{"wandalen/wretry.action", "command", "shell"},
	{"cloudflare/wrangler-action", "command", "shell"},
	{"cloudflare/wrangler-action", "precommands", "shell"},
	{"cloudflare/wrangler-action", "postcommands", "shell"},
	{"uraimo/run-on-arch-action", "run", "shell"},
	{"uraimo/run-on-arch-action", "install", "shell"},
	{"pguyot/arm-runner-action", "commands", "shell"},
	{"devcontainers/ci", "runcmd", "shell"},
	{"vmactions/freebsd-vm", "run", "shell"},
	{"vmactions/freebsd-vm", "prepare", "shell"},
	{"cross-platform-actions/action", "run", "shell"},
	// tibdex/backport compiles these four inputs with lodash's template(): <% %> and <%= %>
	// run as JavaScript in the action, with its token. The pull request's title and body it
	// passes as template data are not evaluated; only text pasted into the template is.
	// korthout/backport-action (plain string replace of ${pull_title}...) and
	// sorenlouv/backport-github-action (Handlebars in .backportrc.json) run no code.
	{"tibdex/backport", "title_template", "lodash-template"},
	{"tibdex/backport", "body_template", "lodash-template"},
	{"tibdex/backport", "head_template", "lodash-template"},
	{"tibdex/backport", "labels_template", "lodash-template"},
}

// githubScriptAction runs its `script:` input as JavaScript.
const githubScriptAction = "actions/github-script"
