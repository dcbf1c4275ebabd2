package steps_test

import (
	"fmt"
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/debugflow/debugflow/steps/stepflag"
)

const stepFlagsDoc = "../docs/step-flags.md"

// stepFlagsReference renders every verb's flags from its options struct, the way gh renders
// its manual from its commands.
func stepFlagsReference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# debugflow-step flags\n\n")
	b.WriteString("<!-- Generated from the options structs of the verbs (their flag tags) by\n")
	b.WriteString("     go test ./steps -run TestStepFlagsReference -update. Do not edit. -->\n\n")
	b.WriteString("Every flag of every `debugflow-step` verb, from the struct tags that also register the\n")
	b.WriteString("flags and write the generated workflows' command lines (see\n")
	b.WriteString("[design.md](design.md#adding-a-step-flag)). *Always written*: the generated workflow\n")
	b.WriteString("writes the flag even when it holds its default. The options of `gate` (package `tmate`) and\n")
	b.WriteString("`report` (package `report`, shared with `debugflow report`) live outside package `steps`;\n")
	b.WriteString("their help pages are in [step-cli.md](step-cli.md).\n")
	for _, verb := range allVerbs() {
		fields, err := stepflag.Fields(reflect.TypeOf(verb.Options))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n## %s\n\n", verb.Name)
		fmt.Fprintf(&b, "Options: `%s`.\n\n", reflect.TypeOf(verb.Options))
		b.WriteString("| flag | type | default | always written | meaning |\n|---|---|---|---|---|\n")
		for _, f := range fields {
			name := "`--" + f.Name + "`"
			if f.Short != "" {
				name = "`-" + f.Short + "`, " + name
			}
			def := ""
			if f.Default != "" {
				def = "`" + f.Default + "`"
			}
			always := ""
			if f.Always {
				always = "yes"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, typeName(f.Type), def, always, cell(f.Usage))
		}
	}
	return b.String()
}

func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return "duration"
	case t.Kind() == reflect.Slice:
		return t.Elem().Kind().String() + ", repeatable"
	}
	return t.Kind().String()
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestStepFlagsReference keeps docs/step-flags.md the rendering of the options structs: it
// fails when a flag changed and the page did not (run with -update to rewrite it).
func TestStepFlagsReference(t *testing.T) {
	t.Parallel()
	golden.CheckString(t, stepFlagsDoc, stepFlagsReference(t))
}
