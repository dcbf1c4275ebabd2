package spec

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/lazyre"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// suggest returns the candidate nearest to name when it is near enough to be a typo ("worker"
// for "workers", "timeout-minutes" for "timeout_minutes", "Reproduce_Count"), else "".
func suggest(name string, candidates []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestDist := "", -1
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := editDistance(norm(name), norm(c))
		if d > typoBudget(len(c)) {
			continue
		}
		if bestDist < 0 || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	return best
}

// Suggest returns the candidate nearest to name when it is near enough to be a typo, else ""
// (the rule the spec's own hints use, for a command's flags).
func Suggest(name string, candidates []string) string { return suggest(name, candidates) }

// typoBudget is how many edits still look like a typo of a word of n letters.
func typoBudget(n int) int {
	switch {
	case n <= 3:
		return 0 // only case and - versus _ ("CI" for "ci")
	case n <= 5:
		return 1
	case n <= 10:
		return 2
	}
	return 3
}

// editDistance is the optimal-string-alignment distance: insertions, deletions, substitutions
// and swaps of adjacent letters each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// keyHint is what follows "unknown key" for key under path: a near-miss among the keys of that
// mapping, or the places elsewhere in the spec where the key exists.
func keyHint(key, path string, siblings []string) string {
	if s := suggest(key, siblings); s != "" {
		return fmt.Sprintf(`; did you mean %q?`, s)
	}
	var elsewhere []string
	here := indexRe.ReplaceAllString(path, "[]")
	for _, p := range specKeyPaths()[key] {
		if parent, _ := cutLast(p); parent != here {
			elsewhere = append(elsewhere, p)
		}
	}
	if len(elsewhere) > 0 {
		return fmt.Sprintf(" here; did you mean %s?", strings.Join(elsewhere, " or "))
	}
	return ""
}

var indexRe = lazyre.New(`\[\d+\]`)

func cutLast(p string) (parent, last string) {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

// specKeyPaths maps every key of the spec schema to the paths where it is a key, e.g. "count"
// to ["reproducer.count"] and "name" to ["artifact.name", "inputs[].name", "workflow.name"].
var specKeyPaths = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer || (t.Kind() == reflect.Slice && t != envType) {
			if t.Kind() == reflect.Slice {
				path += "[]"
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		_, keys := fieldsOf(t)
		fields, _ := fieldsOf(t)
		for _, k := range keys {
			p := joinPath(path, k)
			out[k] = append(out[k], p)
			walk(t.Field(fields[k]).Type, p)
		}
	}
	walk(reflect.TypeOf(Spec{}), "")
	for k := range out {
		slices.Sort(out[k])
	}
	return out
})

// valueHint is what follows an error about a value outside a fixed set: the nearest allowed
// value, when got looks like a typo of it ("bundel" for "bundle").
func valueHint[S ~string](got S, allowed []S) string {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	if m := suggest(string(got), names); m != "" {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}

// inputHint is what follows a reference to an undeclared input: the nearest declared name.
func inputHint(s *Spec, name string) string {
	names := make([]string, len(s.Inputs))
	for i, in := range s.Inputs {
		names[i] = in.Name
	}
	if m := suggest(name, names); m != "" {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}
