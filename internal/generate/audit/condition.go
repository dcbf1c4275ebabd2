package audit

import (
	"math"
	"strconv"
	"strings"
)

// A condition (`if:`) decides whether a job or step runs at all. Several rules only matter
// when a job can run for a given event, for example when a pull request from a fork can
// start it; a job guarded by
//
//	if: github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository
//
// cannot. The evaluator below parses a condition with GitHub's expression grammar and
// evaluates it with three-valued logic: what the scenario fixes (the event name, whether the
// pull request comes from a fork) is known, everything else is unknown, and a job is
// unreachable only when its condition is known to be false.
//
// https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/evaluate-expressions-in-workflows-and-actions

// scenario is what is known about a run when deciding whether a condition can hold.
type scenario struct {
	// Event is github.event_name.
	Event string
	// Fork is whether the pull request (for pull_request* events) comes from a fork.
	Fork bool
}

// Symbols stand for strings whose exact text is unknown but whose equality is: the
// repository a fork's pull request comes from is not the base repository.
const (
	symBaseRepo = "base repository"
	symHeadRepo = "head repository"
)

// pullRequestEvents carry github.event.pull_request.
var pullRequestEvents = map[string]bool{
	"pull_request": true, "pull_request_target": true,
	"pull_request_review": true, "pull_request_review_comment": true,
}

// condValue is the value of an expression: unknown, or a known null, bool, number,
// string, or symbol.
type condValue struct {
	kind condKind
	b    bool
	n    float64
	s    string
}

type condKind int

const (
	condUnknown condKind = iota
	condNull
	condBool
	condNumber
	condString
	condSymbol
)

var unknownValue = condValue{}

func boolValue(b bool) condValue { return condValue{kind: condBool, b: b} }

// truthy returns the value's truthiness; ok is false when it is unknown.
func (v condValue) truthy() (t, ok bool) {
	switch v.kind {
	case condNull:
		return false, true
	case condBool:
		return v.b, true
	case condNumber:
		return v.n != 0 && !math.IsNaN(v.n), true
	case condString:
		return v.s != "", true
	case condSymbol:
		return true, true
	}
	return false, false
}

// number coerces a known value as GitHub does for comparisons of different types.
func (v condValue) number() (float64, bool) {
	switch v.kind {
	case condNull:
		return 0, true
	case condBool:
		if v.b {
			return 1, true
		}
		return 0, true
	case condNumber:
		return v.n, true
	case condString:
		s := strings.TrimSpace(v.s)
		if s == "" {
			return 0, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
		return math.NaN(), true
	}
	return 0, false
}

// equal compares two values as GitHub's == does (strings ignore case); ok is false when
// the answer is unknown.
func equal(a, b condValue) (eq, ok bool) {
	switch {
	case a.kind == condUnknown || b.kind == condUnknown:
		return false, false
	case a.kind == condSymbol || b.kind == condSymbol:
		if a.kind == condSymbol && b.kind == condSymbol {
			return a.s == b.s, true
		}
		if a.kind == condNull || b.kind == condNull {
			return false, true // a symbol is a non-empty string
		}
		return false, false
	case a.kind == b.kind:
		switch a.kind {
		case condNull:
			return true, true
		case condBool:
			return a.b == b.b, true
		case condString:
			return strings.EqualFold(a.s, b.s), true
		}
	}
	x, _ := a.number()
	y, _ := b.number()
	return x == y, true
}

// condNode is a parsed expression.
type condNode interface {
	eval(sc scenario) condValue
}

type (
	condLiteral struct{ v condValue }
	condContext struct {
		path    []string // lower case
		dynamic bool     // a computed index: the value is unknown
		// base is the computed value the accessors apply to (fromJSON(x).name), nil for a
		// context (github.event.issue).
		base condNode
	}
	condNot struct{ x condNode }
	condBin struct {
		op   string
		l, r condNode
	}
	condCall struct {
		name string // lower case
		args []condNode
	}
)

func (n condLiteral) eval(scenario) condValue { return n.v }

func (n condNot) eval(sc scenario) condValue {
	if t, ok := n.x.eval(sc).truthy(); ok {
		return boolValue(!t)
	}
	return unknownValue
}

func (n condBin) eval(sc scenario) condValue {
	switch n.op {
	case "&&":
		l := n.l.eval(sc)
		if t, ok := l.truthy(); ok && !t {
			return l
		}
		r := n.r.eval(sc)
		if t, ok := r.truthy(); ok && !t {
			return r
		}
		if _, ok := l.truthy(); ok {
			return r
		}
		return unknownValue
	case "||":
		l := n.l.eval(sc)
		if t, ok := l.truthy(); ok && t {
			return l
		}
		r := n.r.eval(sc)
		if t, ok := r.truthy(); ok && t {
			return r
		}
		if _, ok := l.truthy(); ok {
			return r
		}
		return unknownValue
	case "==", "!=":
		eq, ok := equal(n.l.eval(sc), n.r.eval(sc))
		if !ok {
			return unknownValue
		}
		return boolValue(eq == (n.op == "=="))
	}
	return unknownValue // < <= > >=: not needed to decide reachability
}

func (n condCall) eval(sc scenario) condValue {
	switch n.name {
	case "always":
		return boolValue(true)
	case "startswith", "endswith", "contains":
		if len(n.args) != 2 {
			return unknownValue
		}
		a, b := n.args[0].eval(sc), n.args[1].eval(sc)
		if a.kind != condString || b.kind != condString {
			return unknownValue
		}
		x, y := strings.ToLower(a.s), strings.ToLower(b.s)
		switch n.name {
		case "startswith":
			return boolValue(strings.HasPrefix(x, y))
		case "endswith":
			return boolValue(strings.HasSuffix(x, y))
		}
		return boolValue(strings.Contains(x, y))
	}
	return unknownValue // success(), failure(), format(), fromJSON()...: not known statically
}

// eval returns what the scenario fixes about a context.
func (n condContext) eval(sc scenario) condValue {
	if n.dynamic {
		return unknownValue
	}
	path := strings.Join(n.path, ".")
	switch path {
	case "github.event_name":
		return condValue{kind: condString, s: sc.Event}
	case "github.repository", "github.event.repository.full_name":
		return condValue{kind: condSymbol, s: symBaseRepo}
	}
	if rest, ok := strings.CutPrefix(path, "github.event.pull_request"); ok {
		if !pullRequestEvents[sc.Event] {
			return condValue{kind: condNull} // no pull request in this event's payload
		}
		switch rest {
		case ".head.repo.full_name":
			if sc.Fork {
				return condValue{kind: condSymbol, s: symHeadRepo}
			}
			return condValue{kind: condSymbol, s: symBaseRepo}
		case ".head.repo.fork":
			return boolValue(sc.Fork)
		}
	}
	return unknownValue
}

// mayRun reports whether a condition (the text of an `if:`, with or without ${{ }}) can be
// true in the scenario. An empty or unparsable condition may run.
func mayRun(cond string, sc scenario) bool {
	expr, ok := conditionExpression(cond)
	if !ok {
		return true
	}
	n, ok := parseCondition(expr)
	if !ok {
		return true
	}
	t, known := n.eval(sc).truthy()
	return t || !known
}

// conditionExpression returns the expression of an `if:` value. GitHub accepts it bare or
// as one ${{ }}; text around or between several ${{ }} makes a non-empty string, which is
// always true.
func conditionExpression(cond string) (string, bool) {
	c := strings.TrimSpace(cond)
	if c == "" {
		return "", false
	}
	exprs := findExpressions(c)
	switch {
	case len(exprs) == 0:
		return c, true
	case len(exprs) == 1 && exprs[0].Offset == 0 && len(exprs[0].Source()) == len(c):
		return exprs[0].Inner, true
	}
	return "", false
}

// maxConditionDepth bounds the parser's recursion on hostile input.
const maxConditionDepth = 100

// parseCondition parses a GitHub expression; ok is false on a syntax error.
func parseCondition(expr string) (condNode, bool) {
	p := &condParser{s: expr}
	n := p.or(0)
	p.skip()
	if p.err || n == nil || p.i != len(p.s) {
		return nil, false
	}
	return n, true
}

type condParser struct {
	s   string
	i   int
	err bool
}

func (p *condParser) skip() { p.i = skipSpaces(p.s, p.i) }

// accept consumes op when it comes next.
func (p *condParser) accept(op string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], op) {
		p.i += len(op)
		return true
	}
	return false
}

func (p *condParser) fail() condNode {
	p.err = true
	return nil
}

func (p *condParser) or(depth int) condNode {
	if depth > maxConditionDepth {
		return p.fail()
	}
	l := p.and(depth + 1)
	for !p.err && p.accept("||") {
		l = condBin{"||", l, p.and(depth + 1)}
	}
	return l
}

func (p *condParser) and(depth int) condNode {
	l := p.equality(depth)
	for !p.err && p.accept("&&") {
		l = condBin{"&&", l, p.equality(depth)}
	}
	return l
}

func (p *condParser) equality(depth int) condNode {
	l := p.comparison(depth)
	for !p.err {
		switch {
		case p.accept("=="):
			l = condBin{"==", l, p.comparison(depth)}
		case p.accept("!="):
			l = condBin{"!=", l, p.comparison(depth)}
		default:
			return l
		}
	}
	return l
}

func (p *condParser) comparison(depth int) condNode {
	l := p.unary(depth)
	for !p.err {
		switch {
		case p.accept("<="), p.accept(">="):
			l = condBin{"<>", l, p.unary(depth)}
		case p.peekCompare():
			p.i++
			l = condBin{"<>", l, p.unary(depth)}
		default:
			return l
		}
	}
	return l
}

func (p *condParser) peekCompare() bool {
	p.skip()
	return p.i < len(p.s) && (p.s[p.i] == '<' || p.s[p.i] == '>')
}

func (p *condParser) unary(depth int) condNode {
	if depth > maxConditionDepth {
		return p.fail()
	}
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == '!' && !strings.HasPrefix(p.s[p.i:], "!=") {
		p.i++
		return condNot{p.unary(depth + 1)}
	}
	return p.postfix(depth)
}

// postfix parses a primary and its .name, .*, [index] accessors.
func (p *condParser) postfix(depth int) condNode {
	n := p.primary(depth)
	ctx, isCtx := n.(condContext)
	for !p.err {
		switch {
		case p.accept("."):
			p.skip()
			switch {
			case p.i < len(p.s) && p.s[p.i] == '*':
				p.i++
				ctx.path = append(ctx.path, "*")
			case p.i < len(p.s) && isIdentStart(p.s[p.i]):
				j := skipIdent(p.s, p.i)
				ctx.path = append(ctx.path, strings.ToLower(p.s[p.i:j]))
				p.i = j
			default:
				return p.fail()
			}
			if !isCtx {
				ctx.dynamic = true
				ctx.base = n
			}
		case p.accept("["):
			idx := p.or(depth + 1)
			if !p.accept("]") {
				return p.fail()
			}
			if lit, ok := idx.(condLiteral); ok && lit.v.kind == condString {
				ctx.path = append(ctx.path, strings.ToLower(lit.v.s))
			} else {
				ctx.dynamic = true
			}
			if !isCtx {
				ctx.dynamic = true
				ctx.base = n
			}
		default:
			if isCtx || ctx.dynamic {
				return ctx
			}
			return n
		}
		isCtx = isCtx || ctx.dynamic
	}
	return nil
}

func (p *condParser) primary(depth int) condNode {
	p.skip()
	if p.i >= len(p.s) {
		return p.fail()
	}
	c := p.s[p.i]
	switch {
	case c == '(':
		p.i++
		n := p.or(depth + 1)
		if !p.accept(")") {
			return p.fail()
		}
		return n
	case c == '\'':
		end := skipString(p.s, p.i)
		if end > len(p.s) || end-p.i < 2 || p.s[end-1] != '\'' {
			return p.fail()
		}
		lit := strings.ReplaceAll(p.s[p.i+1:end-1], "''", "'")
		p.i = end
		return condLiteral{condValue{kind: condString, s: lit}}
	case isDigit(c) || c == '-' || c == '.':
		j := p.i + 1
		for j < len(p.s) && (isIdentChar(p.s[j]) || p.s[j] == '.' || p.s[j] == '+') {
			j++
		}
		f, err := strconv.ParseFloat(p.s[p.i:j], 64)
		if err != nil {
			if v, err2 := strconv.ParseInt(p.s[p.i:j], 0, 64); err2 == nil {
				f = float64(v)
			} else {
				return p.fail()
			}
		}
		p.i = j
		return condLiteral{condValue{kind: condNumber, n: f}}
	case isIdentStart(c):
		j := skipIdent(p.s, p.i)
		name := strings.ToLower(p.s[p.i:j])
		p.i = j
		switch name {
		case "true", "false":
			return condLiteral{boolValue(name == "true")}
		case "null":
			return condLiteral{condValue{kind: condNull}}
		}
		if p.accept("(") {
			call := condCall{name: name}
			if !p.accept(")") {
				for {
					call.args = append(call.args, p.or(depth+1))
					if p.err {
						return nil
					}
					if p.accept(")") {
						break
					}
					if !p.accept(",") {
						return p.fail()
					}
				}
			}
			return call
		}
		return condContext{path: []string{name}}
	}
	return p.fail()
}
