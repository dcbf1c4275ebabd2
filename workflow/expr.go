package workflow

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"strconv"
	"strings"
)

// Expr is a GitHub Actions expression without the ${{ }} delimiters, built with the helpers
// below so callers never hand-write expression strings. Fields typed Expr (if:) are written
// bare; everywhere else use Expr.String, which adds the delimiters, or Concat.
//
// The combinators (Or, And, Not, Eq, Ne) add parentheses only where GitHub's operator
// precedence needs them (! binds tightest, then < <= > >=, then == !=, then &&, then ||).
type Expr string

// String returns the expression wrapped in ${{ }}, ready for a YAML value.
func (e Expr) String() string { return "${{ " + string(e) + " }}" }

// Text is literal text for Concat.
type Text string

// String returns the text unchanged.
func (t Text) String() string { return string(t) }

// Concat joins literal Text and expressions (wrapped in ${{ }}) into one string value:
// Concat(Text("artifacts-"), Matrix("runner")) is "artifacts-${{ matrix.runner }}".
func Concat(parts ...fmt.Stringer) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.String())
	}
	return b.String()
}

// identifier is a name GitHub accepts after a dot in a property dereference.
var identifier = lazyre.New(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// property dereferences name on base: base.name, or base['name'] when name is not an
// identifier.
func property(base Expr, name string) Expr {
	if identifier.MatchString(name) {
		return base + "." + Expr(name)
	}
	return base + "[" + Lit(name) + "]"
}

// Input is inputs.<name>, a workflow_dispatch input (empty on other events).
func Input(name string) Expr { return property("inputs", name) }

// StepOutput is steps.<id>.outputs.<name>.
func StepOutput(id, name string) Expr {
	return property(property("steps", id)+".outputs", name)
}

// StepOutcome is steps.<id>.outcome (success, failure, cancelled or skipped).
func StepOutcome(id string) Expr { return property("steps", id) + ".outcome" }

// Matrix is matrix.<name>.
func Matrix(name string) Expr { return property("matrix", name) }

// Github is github.<name>, a field of the github context such as run_id or workflow.
func Github(name string) Expr { return property("github", name) }

// EnvRef is env.<name>.
func EnvRef(name string) Expr { return property("env", name) }

// NeedsResult is needs.<job>.result.
func NeedsResult(job string) Expr { return property("needs", job) + ".result" }

// Always is always(): run even when an earlier step failed or the run was cancelled.
func Always() Expr { return "always()" }

// Success is success(): every earlier step succeeded (the default condition).
func Success() Expr { return "success()" }

// Failure is failure(): an earlier step failed.
func Failure() Expr { return "failure()" }

// Cancelled is cancelled(): the run was cancelled.
func Cancelled() Expr { return "cancelled()" }

// Lit is a string literal: single-quoted with ' doubled.
func Lit(s string) Expr { return Expr("'" + strings.ReplaceAll(s, "'", "''") + "'") }

// LitNumber is a number literal.
func LitNumber(n int) Expr { return Expr(strconv.Itoa(n)) }

// LitBool is true or false.
func LitBool(b bool) Expr { return Expr(strconv.FormatBool(b)) }

// Call is fn(args...), a function call such as contains(a, b).
func Call(fn string, args ...Expr) Expr {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = string(a)
	}
	return Expr(fn + "(" + strings.Join(parts, ", ") + ")")
}

// FromJSON is fromJSON(e): parses JSON text, e.g. a string output into a number.
func FromJSON(e Expr) Expr { return Call("fromJSON", e) }

// ToJSON is toJSON(e).
func ToJSON(e Expr) Expr { return Call("toJSON", e) }

// Contains is contains(haystack, needle).
func Contains(haystack, needle Expr) Expr { return Call("contains", haystack, needle) }

// Format is format('<format>', args...): {0}, {1} in format are replaced by the arguments.
func Format(format string, args ...Expr) Expr {
	return Call("format", append([]Expr{Lit(format)}, args...)...)
}

// Default is e || '<def>': the value of e, or def when e is empty (an input on a run that
// was not started by workflow_dispatch).
func Default(e Expr, def string) Expr { return Or(e, Lit(def)) }

// Or is a || b || ...: the first truthy operand.
func Or(a Expr, more ...Expr) Expr { return chain(precOr, "||", a, more) }

// And is a && b && ...
func And(a Expr, more ...Expr) Expr { return chain(precAnd, "&&", a, more) }

// Eq is a == b (string comparison ignores case in GitHub expressions).
func Eq(a, b Expr) Expr { return binary(precEq, "==", a, b) }

// Ne is a != b.
func Ne(a, b Expr) Expr { return binary(precEq, "!=", a, b) }

// Not is !e.
func Not(e Expr) Expr {
	if weakestOperator(e) != precAtom {
		e = "(" + e + ")"
	}
	return "!" + e
}

// Operator precedence, weakest first. precAtom means the expression has no operator outside
// parentheses, brackets and string literals.
const (
	precOr = iota + 1
	precAnd
	precEq
	precCompare
	precAtom
)

// chain joins associative operands (|| or &&), parenthesising operands that bind weaker.
func chain(prec int, op string, a Expr, more []Expr) Expr {
	parts := []string{string(wrap(a, prec, false))}
	for _, m := range more {
		parts = append(parts, string(wrap(m, prec, false)))
	}
	return Expr(strings.Join(parts, " "+op+" "))
}

// binary is a non-associative operator: operands of equal or weaker precedence get
// parentheses, so a == b == c is never written ambiguously.
func binary(prec int, op string, a, b Expr) Expr {
	return wrap(a, prec, true) + Expr(" "+op+" ") + wrap(b, prec, true)
}

func wrap(e Expr, prec int, strict bool) Expr {
	w := weakestOperator(e)
	if w < prec || (strict && w == prec) {
		return "(" + e + ")"
	}
	return e
}

// weakestOperator scans e and returns the precedence of its weakest binary operator outside
// parentheses, brackets and string literals, or precAtom when there is none.
func weakestOperator(e Expr) int {
	s := string(e)
	weakest := precAtom
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			// Skip the literal; '' is an escaped quote inside it.
			for i++; i < len(s); i++ {
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case depth != 0:
		case strings.HasPrefix(s[i:], "||"):
			weakest = min(weakest, precOr)
			i++
		case strings.HasPrefix(s[i:], "&&"):
			weakest = min(weakest, precAnd)
			i++
		case strings.HasPrefix(s[i:], "==") || strings.HasPrefix(s[i:], "!="):
			weakest = min(weakest, precEq)
			i++
		case c == '<' || c == '>':
			weakest = min(weakest, precCompare)
		}
	}
	return weakest
}
