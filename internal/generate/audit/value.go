package audit

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Which values can carry code. An expression pasted into a script is an injection only when
// its value can hold text someone else chose; a commit SHA, a number, a boolean or a choice
// from a fixed list cannot, and neither can the result of a comparison or of contains(). The
// rules that follow untrusted data (expression-injection, indirect-injection) ask the
// document, which knows the workflow's typed inputs.

// safeFieldNames are last properties of event payload paths whose value is a commit SHA, a
// number or id, or a boolean: GitHub fills them, and no one can put a quote or $( in them.
//
// https://docs.github.com/en/webhooks/webhook-events-and-payloads
var safeFieldNames = map[string]bool{
	// commit SHAs
	"sha": true, "head_sha": true, "base_sha": true, "merge_commit_sha": true,
	"before": true, "after": true, "commit_id": true, "original_commit_id": true,
	// numbers and ids
	"number": true, "id": true, "run_id": true, "run_number": true, "run_attempt": true,
	"check_suite_id": true, "workflow_id": true, "installation_id": true,
	"commits": true, "additions": true, "deletions": true, "changed_files": true,
	"comments": true, "review_comments": true, "size": true, "position": true, "line": true,
	"original_line": true, "start_line": true, "original_position": true, "in_reply_to_id": true,
	"stargazers_count": true, "forks_count": true, "open_issues_count": true,
	"created_at": true, "updated_at": true, "closed_at": true, "merged_at": true, "pushed_at": true,
	// booleans
	"fork": true, "draft": true, "merged": true, "locked": true, "private": true,
	"forced": true, "created": true, "deleted": true, "site_admin": true, "maintainer_can_modify": true,
	"mergeable": true, "rebaseable": true, "archived": true, "disabled": true, "is_template": true,
	"prerelease": true,
}

// safeInputTypes are the workflow_dispatch and workflow_call input types whose value is not
// free text: GitHub refuses a dispatch whose choice is not one of the options, and a boolean or
// number is converted before the workflow sees it.
var safeInputTypes = map[string]bool{"boolean": true, "number": true, "choice": true}

// booleanFunctions return true or false, whatever their arguments hold.
var booleanFunctions = map[string]bool{
	"contains": true, "startswith": true, "endswith": true,
	"success": true, "failure": true, "always": true, "cancelled": true,
}

// readInputTypes records the inputs of workflow_dispatch and workflow_call that are typed
// boolean, number or choice in every declaration (an input declared twice with different
// types is free text if either says so).
func (d *document) readInputTypes(on ast.Node) {
	d.safeInputs = map[string]bool{}
	free := map[string]bool{}
	for _, event := range []string{"workflow_dispatch", "workflow_call"} {
		for _, e := range d.mappingEntries(d.lookup(d.lookup(on, event), "inputs")) {
			name := strings.ToLower(e.Key)
			if safeInputTypes[strings.ToLower(strings.TrimSpace(scalarText(d.lookup(e.Value, "type"))))] {
				d.safeInputs[name] = true
			} else {
				free[name] = true
			}
		}
	}
	for name := range free {
		delete(d.safeInputs, name)
	}
}

// safePath reports whether a full context path names a value that cannot carry code.
func (d *document) safePath(chain []string) bool {
	if len(chain) < 2 || chain[len(chain)-1] == "*" {
		return false
	}
	switch {
	case chain[0] == "inputs" && len(chain) == 2:
		return d.safeInputs[chain[1]]
	case chain[0] == "github" && chain[1] == "event" && len(chain) == 4 && chain[2] == "inputs":
		return d.safeInputs[chain[3]]
	case chain[0] == "github" && (chain[1] == "event" || chain[1] == "*") && len(chain) >= 3:
		return safeFieldNames[chain[len(chain)-1]]
	}
	return false
}

// isUntrusted reports whether a context path reads untrusted text (or an object holding
// some), and a phrase naming it.
func (d *document) isUntrusted(chain []string) (string, bool) {
	for _, u := range untrustedContexts {
		if !matchesContext(chain, u.path) {
			continue
		}
		if len(chain) >= len(u.path) && d.safePath(chain) {
			return "", false
		}
		dotted := strings.Join(chain, ".")
		what := u.what
		if d.action && u.path[0] == "inputs" {
			what = "action input (the calling workflow's value)"
		}
		if len(chain) < len(u.path) {
			return dotted + " (which holds the " + what + ")", true
		}
		return "the " + what + " " + dotted, true
	}
	return "", false
}

// untrustedPath returns the first context path whose text can become the value of expr
// (the inside of a ${{ }}), and a phrase naming it; nil when the value cannot carry code.
// A comparison, a negation, contains() and the like give a boolean; `c && x` gives x (or a
// falsy value of c: false, 0, ” or null); `a || b` gives a or b; format(), join(), toJSON()
// and fromJSON() give text made of their arguments. An expression the grammar does not
// accept is read as the list of contexts it names.
func (d *document) untrustedPath(expr string) ([]string, string) {
	if hits := d.untrustedPaths(expr); len(hits) > 0 {
		return hits[0].path, hits[0].what
	}
	return nil, ""
}

// taintHit is one untrusted context an expression's value can come from.
type taintHit struct {
	path []string
	what string
}

// untrustedPaths is every context untrustedPath could return, in order.
func (d *document) untrustedPaths(expr string) []taintHit {
	var hits []taintHit
	if n, ok := parseCondition(expr); ok {
		d.taint(n, 0, &hits)
		return hits
	}
	for _, chain := range contextPaths(expr) {
		if what, ok := d.isUntrusted(chain); ok {
			hits = append(hits, taintHit{chain, what})
		}
	}
	return hits
}

// taint walks a parsed expression for the contexts its value can come from.
func (d *document) taint(n condNode, depth int, hits *[]taintHit) {
	if depth > maxConditionDepth {
		return
	}
	switch v := n.(type) {
	case condBin:
		switch v.op {
		case "&&":
			d.taint(v.r, depth+1, hits)
		case "||":
			d.taint(v.l, depth+1, hits)
			d.taint(v.r, depth+1, hits)
		}
		// ==, !=, <, <=, >, >=: a boolean
	case condCall:
		if booleanFunctions[v.name] || v.name == "hashfiles" {
			return
		}
		for _, a := range v.args {
			d.taint(a, depth+1, hits)
		}
	case condContext:
		if v.base != nil {
			d.taint(v.base, depth+1, hits) // fromJSON(x).name: a part of x
			return
		}
		if v.dynamic {
			// github.event[x]: some property of the prefix, safe or not.
			for _, u := range untrustedContexts {
				if matchesContext(v.path, u.path) {
					*hits = append(*hits, taintHit{v.path, strings.Join(v.path, ".") + "[…] (a property of the " + u.what + ")"})
					return
				}
			}
			return
		}
		if w, ok := d.isUntrusted(v.path); ok {
			*hits = append(*hits, taintHit{v.path, w})
		}
	}
	// literals and negations: no text of anyone's
}

// valueSource is one thing an expression's value can be: a string literal or a context.
type valueSource struct {
	literal *string
	context []string // nil for a literal
}

// valueSources returns the literals and contexts that can become the value of n, as taint
// reads it (`c && 'a' || 'b'` gives 'a' and 'b'; a comparison gives nothing, as a boolean is
// no label). A computed value (fromJSON(...), format(...)) gives an empty context.
func valueSources(n condNode, depth int) []valueSource {
	if depth > maxConditionDepth {
		return nil
	}
	switch v := n.(type) {
	case condLiteral:
		if v.v.kind == condString {
			s := v.v.s
			return []valueSource{{literal: &s}}
		}
	case condBin:
		switch v.op {
		case "&&":
			return valueSources(v.r, depth+1)
		case "||":
			return append(valueSources(v.l, depth+1), valueSources(v.r, depth+1)...)
		}
	case condContext:
		if v.base != nil || v.dynamic {
			return []valueSource{{context: []string{}}}
		}
		return []valueSource{{context: v.path}}
	case condCall:
		if !booleanFunctions[v.name] {
			return []valueSource{{context: []string{}}}
		}
	}
	return nil
}
