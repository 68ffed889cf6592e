// How values are shown: text for the REPL, a MIME bundle for Jupyter.

package interp

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/toyml/toy/toy/display"
	"github.com/toyml/toy/toy/tensor"
)

var errorType = reflect.TypeOf((*error)(nil)).Elem()

// maxItems bounds how many elements of a slice, array or map are shown.
const maxItems = 16

// Bundle renders a result for display; ok is false when there is nothing to
// show. Several values (a call's results) are shown comma-separated.
func (r Result) Bundle() (b display.Bundle, ok bool) {
	if len(r.Values) == 0 {
		return b, false
	}
	if len(r.Values) == 1 {
		// A nil error (display.Plot's, say) shows nothing, like Python's None.
		v := r.Values[0]
		if !v.IsValid() || v.Type().Implements(errorType) && isNil(v) {
			return b, false
		}
		return Format(v), true
	}
	var parts []string
	for _, v := range r.Values {
		parts = append(parts, Format(v).Text)
	}
	return display.Bundle{Text: strings.Join(parts, ", ")}, true
}

// Format renders one value: a display.Bundle as itself, a tensor as its
// shape, dtype and first values (and an HTML table), an error as its
// message, a Stringer (a model's one-line description) as its String, a
// string quoted, and long slices and maps cut after 16 elements.
func Format(v reflect.Value) display.Bundle {
	if !v.IsValid() {
		return display.Bundle{Text: "<nil>"}
	}
	if v.CanInterface() {
		switch x := v.Interface().(type) {
		case nil:
			return display.Bundle{Text: "<nil>"}
		case display.Bundle:
			return x
		case *tensor.Tensor:
			if x == nil {
				return display.Bundle{Text: "<nil>"}
			}
			return display.Bundle{Text: x.String(), HTML: display.TableHTML(x)}
		case error:
			if isNil(v) {
				return display.Bundle{Text: "<nil>"}
			}
			if name, msg := Describe(x); name == "NativeCallError" {
				return display.Bundle{Text: name + ": " + msg}
			}
			return display.Bundle{Text: x.Error()}
		case fmt.Stringer:
			if isNil(v) {
				return display.Bundle{Text: "<nil>"}
			}
			return display.Bundle{Text: x.String()}
		case string:
			return display.Bundle{Text: strconv.Quote(x)}
		}
	}
	return display.Bundle{Text: text(v)}
}

func isNil(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

func text(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		if v.Len() > maxItems {
			var b strings.Builder
			fmt.Fprintf(&b, "%s len %d [", v.Type(), v.Len())
			for i := 0; i < maxItems; i++ {
				if i > 0 {
					b.WriteString(" ")
				}
				fmt.Fprint(&b, v.Index(i).Interface())
			}
			b.WriteString(" …]")
			return b.String()
		}
	case reflect.Map:
		if v.Len() > maxItems {
			return fmt.Sprintf("%s len %d", v.Type(), v.Len())
		}
	}
	if v.CanInterface() {
		return fmt.Sprintf("%+v", v.Interface())
	}
	return v.String()
}
