package audit

import (
	"strings"
)

// checkoutAction is the action whose token persistence this rule checks.
const checkoutAction = "actions/checkout"

// persistCredentialsInput is the checkout input that, unless false, writes
// the GITHUB_TOKEN into .git/config where every later step can read it.
const persistCredentialsInput = "persist-credentials"

// checkoutCredentials requires `with: persist-credentials: false` on every
// actions/checkout step: a debug job runs arbitrary build and test code and
// may open a tmate shell, none of which needs the token.
//
// https://github.com/actions/checkout#usage
type checkoutCredentials struct {
	ruleBase
}

func newCheckoutCredentials(file string) *checkoutCredentials {
	return &checkoutCredentials{ruleBase{file: file, info: Rule{
		Name:        "checkout-credentials",
		Description: "every actions/checkout step sets with: persist-credentials: false",
		URL:         "https://github.com/actions/checkout#usage",
		Severity:    Medium,
		Confidence:  High,
	}}}
}

// isCheckout reports whether uses names actions/checkout at any ref.
func isCheckout(uses string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(uses), "@")
	return strings.EqualFold(name, checkoutAction)
}

// VisitStep checks one step.
func (r *checkoutCredentials) VisitStep(s *stepNode) {
	if !isCheckout(s.uses()) {
		return
	}
	const fix = "add `with: persist-credentials: false`"
	v := s.with(persistCredentialsInput)
	if v == nil {
		r.report(s.get("uses"), fix,
			"%s checks out without persist-credentials: false, leaving the GITHUB_TOKEN in .git/config for every later step", s.label())
		return
	}
	if !strings.EqualFold(strings.TrimSpace(scalarText(v)), "false") {
		r.report(v, "set `persist-credentials: false`",
			"%s sets persist-credentials to %q: the GITHUB_TOKEN stays in .git/config for every later step", s.label(), scalarText(v))
	}
}
