package audit

import (
	"github.com/goccy/go-yaml/ast"
)

// secretsExposure refuses expressions that hand out more of the secrets than one value, or a
// secret's parts that the log masking does not know:
//
//   - `toJSON(secrets)` and `secrets[expr]` give every secret of the repository to one step
//     (an action input, an env: value, a script), whatever it needs;
//   - `fromJSON(secrets.X).field` is a part of a JSON secret: the runner masks the secret's
//     whole text in logs, not the field, so the field prints in clear.
//
// https://docs.github.com/en/actions/security-for-github-actions/security-guides/using-secrets-in-github-actions#using-secrets-in-a-workflow
type secretsExposure struct {
	ruleBase
}

func newSecretsExposure(file string) *secretsExposure {
	return &secretsExposure{ruleBase{file: file, info: Rule{
		Name:        "secrets-exposure",
		Description: "no toJSON(secrets) or secrets[expr] (every secret at once), no fromJSON(secrets.X).field (a part the log masking does not know)",
		URL:         "https://docs.github.com/en/actions/security-for-github-actions/security-guides/using-secrets-in-github-actions#using-secrets-in-a-workflow",
		Severity:    Medium,
		Confidence:  High,
	}}}
}

// VisitWorkflow reads every scalar of the workflow (or action) once.
func (r *secretsExposure) VisitWorkflow(w *workflowNode) { r.visit(w.doc, w.root) }

// VisitAction reads every scalar of an action's metadata.
func (r *secretsExposure) VisitAction(w *workflowNode) { r.visit(w.doc, w.root) }

func (r *secretsExposure) visit(doc *document, root ast.Node) {
	ast.Walk(visitorFunc(func(n ast.Node) {
		switch n.(type) {
		case *ast.StringNode, *ast.LiteralNode:
		default:
			return
		}
		sc := doc.decodeScalar(n)
		for _, e := range findExpressions(sc.Text) {
			p, ok := parseCondition(e.Inner)
			if !ok {
				continue
			}
			switch what := secretsExposed(p, 0); what {
			case "all":
				r.reportAt(sc.pos(e.Offset), "pass each secret the step needs by name: ${{ secrets.NAME }}",
					"%s gives every secret of the repository to one place, whatever it needs", compact(e.Source()))
			case "part":
				r.reportAt(sc.pos(e.Offset), "store each field as a secret of its own, or register the field with ::add-mask:: before any use",
					"%s reads a field of a JSON secret: the log masks the secret's whole text, not this field, which prints in clear", compact(e.Source()))
			}
		}
	}), root)
}

// secretsExposed says whether an expression reads every secret ("all") or a part of one
// ("part"), or neither ("").
func secretsExposed(n condNode, depth int) string {
	if depth > maxConditionDepth {
		return ""
	}
	switch v := n.(type) {
	case condContext:
		if v.base != nil {
			if call, ok := v.base.(condCall); ok && call.name == "fromjson" {
				for _, a := range call.args {
					if c, ok := a.(condContext); ok && len(c.path) >= 1 && c.path[0] == "secrets" && c.base == nil {
						return "part"
					}
				}
			}
			return secretsExposed(v.base, depth+1)
		}
		if len(v.path) == 1 && v.path[0] == "secrets" {
			if v.dynamic {
				return "all" // secrets[format('{0}_TOKEN', inputs.env)]
			}
		}
	case condCall:
		for _, a := range v.args {
			if c, ok := a.(condContext); ok && c.base == nil && len(c.path) == 1 && c.path[0] == "secrets" {
				return "all" // toJSON(secrets), or any call given the whole object
			}
			if w := secretsExposed(a, depth+1); w != "" {
				return w
			}
		}
	case condBin:
		if w := secretsExposed(v.l, depth+1); w != "" {
			return w
		}
		return secretsExposed(v.r, depth+1)
	case condNot:
		return secretsExposed(v.x, depth+1)
	}
	return ""
}

// visitorFunc adapts a function to ast.Visitor.
type visitorFunc func(ast.Node)

func (f visitorFunc) Visit(n ast.Node) ast.Visitor {
	f(n)
	if _, ok := n.(*ast.LiteralNode); ok {
		return nil // its text is a StringNode below it: read once, through the block scalar
	}
	return f
}
