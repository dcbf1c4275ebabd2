package bisect

import (
	"reflect"
	"strings"
	"testing"

	"github.com/debugflow/debugflow/internal/spec"
)

// TestSpecHashEverySection checks that every section of the spec is hashed and that no type
// in it is one JSON cannot encode whatever its value (a float may be NaN, a func or channel
// never encodes): specHash would then report an error instead of a hash on some spec.
func TestSpecHashEverySection(t *testing.T) {
	h, err := specHash(spec.Default())
	if err != nil {
		t.Fatal(err)
	}
	st := reflect.TypeFor[spec.Spec]()
	for i := range st.NumField() {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		if len(h[name]) != 64 {
			t.Errorf("section %s: hash %q, want a SHA-256 in hex", name, h[name])
		}
	}
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128,
			reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Interface:
			t.Errorf("%s is a %s: json.Marshal may fail on it", path, typ.Kind())
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path+"[]", typ.Elem())
		case reflect.Map:
			walk(path+"{key}", typ.Key())
			walk(path+"{}", typ.Elem())
		case reflect.Struct:
			for i := range typ.NumField() {
				if f := typ.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
					walk(path+"."+f.Name, f.Type)
				}
			}
		}
	}
	walk("Spec", st)
}
