// Package lazyre is a regular expression compiled on first use instead of at package
// initialisation. debugflow-step starts about fifteen times per job and most calls use
// none of the parsers' eighty-odd patterns: compiling them all at start-up was a large
// part of its start-up time. A Regexp is declared where regexp.MustCompile was, and its
// methods are those of *regexp.Regexp that the parsers call.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp compiles its expression once, on first use, and panics there if it is invalid,
// as regexp.MustCompile would at start-up. CompileAll compiles every one declared, so that
// a test catches a typo in a pattern that only a rare path uses.
type Regexp struct {
	expr string
	once sync.Once // a field, not sync.OnceValue's closures: one allocation per pattern at start-up
	re   *regexp.Regexp
	// next links every Regexp made, for CompileAll: a list, not a slice, because a slice
	// grown by append at each of a hundred-odd declarations was 0.9% of debugflow-step's
	// start-up (its copies and their fresh pages).
	next *Regexp
}

var (
	mu   sync.Mutex
	last *Regexp // the newest; each links to the one made before it
	n    int
)

// New returns a Regexp for expr, compiled on first use.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	mu.Lock()
	r.next, last = last, r
	n++
	mu.Unlock()
	return r
}

// CompileAll compiles every Regexp made so far (those of every package linked in, once
// their variables are initialised) and returns the expressions that do not compile.
func CompileAll() (invalid []string) {
	mu.Lock()
	r := last
	mu.Unlock()
	for ; r != nil; r = r.next { // the links never change once made
		if _, err := regexp.Compile(r.expr); err != nil {
			invalid = append(invalid, err.Error())
		}
	}
	return invalid
}

// Count is how many Regexps were made.
func Count() int {
	mu.Lock()
	defer mu.Unlock()
	return n
}

// Get returns the compiled expression.
func (r *Regexp) Get() *regexp.Regexp { return r.get() }

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

func (r *Regexp) String() string                 { return r.get().String() }
func (r *Regexp) MatchString(s string) bool      { return r.get().MatchString(s) }
func (r *Regexp) Match(b []byte) bool            { return r.get().Match(b) }
func (r *Regexp) FindString(s string) string     { return r.get().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int { return r.get().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.get().FindStringSubmatch(s)
}
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.get().FindStringSubmatchIndex(s)
}
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.get().FindSubmatch(b) }
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.get().FindAllString(s, n)
}
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.get().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.get().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.get().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.get().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.get().ReplaceAllLiteralString(src, repl)
}
func (r *Regexp) Split(s string, n int) []string { return r.get().Split(s, n) }
func (r *Regexp) SubexpIndex(name string) int    { return r.get().SubexpIndex(name) }
func (r *Regexp) SubexpNames() []string          { return r.get().SubexpNames() }
func (r *Regexp) NumSubexp() int                 { return r.get().NumSubexp() }
