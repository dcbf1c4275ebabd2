package spec

import (
	"slices"
	"testing"
)

// TestNoExpressionFieldsExist keeps the list free of stale entries: each names a string field
// of the Spec type.
func TestNoExpressionFieldsExist(t *testing.T) {
	all := SchemaStrings()
	for _, f := range noExpressionFields() {
		if !slices.Contains(all, f.schema) {
			t.Errorf("%s is not a string field of the spec", f.schema)
		}
		if f.code == (f.where != "") {
			t.Errorf("%s: say either code or where it is written", f.schema)
		}
	}
}
