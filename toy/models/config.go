// Declared ranges of hyperparameters: a Config's `range` struct tags.

package models

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// CheckRanges returns an error naming arch, the field, its meaning (from
// its card tag) and the range, for the first int or float32 field of cfg
// (a Config struct or a pointer to one) outside the interval its `range`
// tag declares: "[lo, hi]" with either bracket round for an open end, each
// end a number, a power written 1<<20, or * for none:
//
//	Embed   int     `gguf:"embedding_length" range:"[1, 1<<20]"`
//	NormEps float32 `gguf:"attention.layer_norm_rms_epsilon" range:"(0, 1)"`
//	Window  int     `gguf:"attention.sliding_window,optional" range:"[0, *]"`
//
// A NaN is outside every range. What ranges cannot say (Heads divisible by
// KVHeads) a Config's Validate checks after it.
func CheckRanges(arch string, cfg any) error {
	v := reflect.ValueOf(cfg)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		r, ok := f.Tag.Lookup("range")
		if !ok {
			continue
		}
		lo, hi, openLo, openHi, err := parseRange(r)
		if err != nil {
			panic(fmt.Sprintf("models: %s.%s: %v", v.Type(), f.Name, err)) // a bad declaration
		}
		var x float64
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Int:
			x = float64(fv.Int())
		case reflect.Float32: // compared as float32s: 1e12 is the float32 nearest it
			x, lo, hi = fv.Float(), float64(float32(lo)), float64(float32(hi))
		case reflect.Float64:
			x = fv.Float()
		default:
			panic(fmt.Sprintf("models: %s.%s: a range on a %v", v.Type(), f.Name, f.Type))
		}
		if math.IsNaN(x) || x < lo || x > hi || openLo && x == lo || openHi && x == hi {
			what := f.Name
			if _, meaning, ok := strings.Cut(f.Tag.Get("card"), ","); ok {
				what = strings.TrimSpace(meaning) + " (" + f.Name + ")"
			}
			return fmt.Errorf("%s: %s %v is outside %s", arch, what, v.Field(i), r)
		}
	}
	return nil
}

// parseRange reads "[lo, hi]", "(lo, hi)" and their mixtures.
func parseRange(r string) (lo, hi float64, openLo, openHi bool, err error) {
	r = strings.TrimSpace(r)
	a, b, ok := strings.Cut(r, ",")
	if !ok || len(r) < 5 || !strings.ContainsRune("[(", rune(r[0])) || !strings.ContainsRune("])", rune(r[len(r)-1])) {
		return 0, 0, false, false, fmt.Errorf("range %q: want [lo, hi] or (lo, hi)", r)
	}
	openLo, openHi = r[0] == '(', r[len(r)-1] == ')'
	bound := func(s string, inf float64) (float64, error) {
		s = strings.TrimSpace(s)
		if s == "*" {
			return inf, nil
		}
		if base, shift, ok := strings.Cut(s, "<<"); ok {
			b, err1 := strconv.Atoi(strings.TrimSpace(base))
			n, err2 := strconv.Atoi(strings.TrimSpace(shift))
			if err1 != nil || err2 != nil || n < 0 || n > 62 {
				return 0, fmt.Errorf("range %q: bad bound %q", r, s)
			}
			return float64(int64(b) << n), nil
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("range %q: bad bound %q", r, s)
		}
		return x, nil
	}
	if lo, err = bound(a[1:], math.Inf(-1)); err == nil {
		hi, err = bound(b[:len(b)-1], math.Inf(1))
	}
	return lo, hi, openLo, openHi, err
}
