// Declared ranges of hyperparameters and the relations between them: a
// Config's `range` and `multiple` struct tags.

package models

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// CheckRanges returns an error naming arch, the field, its meaning (from
// its card tag) and the values, for the first field of cfg (a Config struct
// or a pointer to one) that breaks what its tags declare:
//
//	range:"[lo, hi]"  an interval, either bracket round for an open end; each
//	                  end a number, a power written 1<<20, * for none, or
//	                  (on an int field) the name of another int field
//	multiple:"n"      an int field is a multiple of n: a number, another int
//	                  field, or k*FIELD (of 0, only 0 is)
//
//	Embed   int     `gguf:"embedding_length" range:"[1, 1<<20]" multiple:"2*Heads"` // an even head width
//	Heads   int     `gguf:"attention.head_count" range:"[1, *]" multiple:"KVHeads"`
//	RopeDim int     `gguf:"rope.dimension_count" range:"[1, HeadDim]" multiple:"2"`
//	NormEps float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)"`
//
// Every field's numeric bounds are checked first, then field by field the
// bounds that name fields and the multiples, so that these see values
// within their own ranges (a KVHeads of 0 is refused before Heads is
// divided by it). A NaN is outside every range. What tags cannot say
// (string enums, a condition on the architecture) a Config's Validate
// checks after.
func CheckRanges(arch string, cfg any) error {
	v := reflect.ValueOf(cfg)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	for _, relations := range []bool{false, true} {
		for i := range v.NumField() {
			if err := checkField(arch, v, i, relations); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkField checks field i of v against its numeric bounds (the first
// pass), or against the bounds that name fields and its multiple.
func checkField(arch string, v reflect.Value, i int, relations bool) error {
	f, fv := v.Type().Field(i), v.Field(i)
	r, hasRange := f.Tag.Lookup("range")
	mult, hasMult := f.Tag.Lookup("multiple")
	if !hasRange && !hasMult {
		return nil
	}
	bad := func(err error) { panic(fmt.Sprintf("models: %s.%s: %v", v.Type(), f.Name, err)) } // a bad declaration
	var x float64
	switch fv.Kind() {
	case reflect.Int:
		x = float64(fv.Int())
	case reflect.Float32, reflect.Float64:
		x = fv.Float()
	default:
		bad(fmt.Errorf("a range on a %v", f.Type))
	}
	what := f.Name
	if _, meaning, ok := strings.Cut(f.Tag.Get("card"), ","); ok {
		what = strings.TrimSpace(meaning) + " (" + f.Name + ")"
	}
	if hasRange {
		lo, hi, openLo, openHi, named, err := parseRange(v, r)
		if err == nil && named != "" && fv.Kind() != reflect.Int {
			err = fmt.Errorf("range %q names a field on a %v", r, f.Type)
		}
		if err != nil {
			bad(err)
		}
		if fv.Kind() == reflect.Float32 { // compared as float32s: 1e12 is the float32 nearest it
			lo, hi = float64(float32(lo)), float64(float32(hi))
		}
		if (named != "") == relations && (math.IsNaN(x) || x < lo || x > hi || openLo && x == lo || openHi && x == hi) {
			return fmt.Errorf("%s: %s %v is outside %s%s", arch, what, fv, r, named)
		}
	}
	if hasMult && relations {
		m, named, err := term(v, mult, 0)
		if err == nil && fv.Kind() != reflect.Int {
			err = fmt.Errorf("a multiple on a %v", f.Type)
		}
		if err != nil {
			bad(err)
		}
		if n, m := int64(x), int64(m); m == 0 && n != 0 || m != 0 && n%m != 0 {
			return fmt.Errorf("%s: %s %d is not a multiple of %s", arch, what, n, cmp.Or(strings.TrimPrefix(named, ", "), fmt.Sprint(m)))
		}
	}
	return nil
}

// parseRange reads "[lo, hi]", "(lo, hi)" and their mixtures, each end a
// term of v; named lists the ends that name fields, ", FIELD = value" each.
func parseRange(v reflect.Value, r string) (lo, hi float64, openLo, openHi bool, named string, err error) {
	r = strings.TrimSpace(r)
	a, b, ok := strings.Cut(r, ",")
	if !ok || len(r) < 5 || !strings.ContainsRune("[(", rune(r[0])) || !strings.ContainsRune("])", rune(r[len(r)-1])) {
		return 0, 0, false, false, "", fmt.Errorf("range %q: want [lo, hi] or (lo, hi)", r)
	}
	openLo, openHi = r[0] == '(', r[len(r)-1] == ')'
	lo, nameLo, err := term(v, a[1:], math.Inf(-1))
	if err == nil {
		hi, named, err = term(v, b[:len(b)-1], math.Inf(1))
	}
	if err != nil {
		err = fmt.Errorf("range %q: %v", r, err)
	}
	return lo, hi, openLo, openHi, nameLo + named, err
}

// term reads a number, a power b<<n, * (inf; none where inf is 0), or an
// int field of v, FIELD or k*FIELD; for the latter, named is ", FIELD =
// value" (or ", k*FIELD = value").
func term(v reflect.Value, s string, inf float64) (x float64, named string, err error) {
	s = strings.TrimSpace(s)
	k, field, scaled := strings.Cut(s, "*")
	if !scaled {
		k, field = "1", s
	}
	if c := strings.TrimSpace(field); c != "" && (c[0] >= 'A' && c[0] <= 'Z' || c[0] >= 'a' && c[0] <= 'z') {
		n, err := strconv.Atoi(strings.TrimSpace(k))
		if fv := v.FieldByName(c); err == nil && fv.IsValid() && fv.Kind() == reflect.Int {
			x := float64(int64(n) * fv.Int())
			return x, fmt.Sprintf(", %s = %v", s, x), nil
		}
		return 0, "", fmt.Errorf("%q is not an int field (or k times one)", s)
	}
	if s == "*" && inf != 0 {
		return inf, "", nil
	}
	if base, shift, ok := strings.Cut(s, "<<"); ok {
		b, err1 := strconv.Atoi(strings.TrimSpace(base))
		n, err2 := strconv.Atoi(strings.TrimSpace(shift))
		if err1 != nil || err2 != nil || n < 0 || n > 62 {
			return 0, "", fmt.Errorf("bad bound %q", s)
		}
		return float64(int64(b) << n), "", nil
	}
	if x, err = strconv.ParseFloat(s, 64); err != nil {
		return 0, "", fmt.Errorf("bad bound %q", s)
	}
	return x, "", nil
}
