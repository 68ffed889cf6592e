// Package instances holds compiled, concrete instances of generic
// standard-library functions for the interpreted slices overlay (see
// interp's generic.go): yaegi cannot call compiled generic code, so the
// overlay's generic functions hand their slices here as any, and the common
// element types run the standard library's own code.
package instances

import (
	"cmp"
	"reflect"
	"slices"
	"sort"
)

// Sort sorts s, a slice of an ordered type, ascending: []int, []float32,
// []float64, []string, []int32, []int64 and []byte by slices.Sort, other
// slices of integers, floats or strings by reflection. It reports whether
// s was such a slice.
func Sort(s any) bool {
	switch x := s.(type) {
	case []int:
		slices.Sort(x)
	case []float32:
		slices.Sort(x)
	case []float64:
		slices.Sort(x)
	case []string:
		slices.Sort(x)
	case []int32:
		slices.Sort(x)
	case []int64:
		slices.Sort(x)
	case []byte:
		slices.Sort(x)
	default:
		v := reflect.ValueOf(s)
		if v.Kind() != reflect.Slice {
			return false
		}
		less := lessFunc(v)
		if less == nil {
			return false
		}
		sort.SliceStable(s, less)
	}
	return true
}

// lessFunc returns a comparison of v's elements by index, nil when they are
// not ordered. NaNs sort first, as with cmp.Less.
func lessFunc(v reflect.Value) func(i, j int) bool {
	switch v.Type().Elem().Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(i, j int) bool { return v.Index(i).Int() < v.Index(j).Int() }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(i, j int) bool { return v.Index(i).Uint() < v.Index(j).Uint() }
	case reflect.Float32, reflect.Float64:
		return func(i, j int) bool { return cmp.Less(v.Index(i).Float(), v.Index(j).Float()) }
	case reflect.String:
		return func(i, j int) bool { return v.Index(i).String() < v.Index(j).String() }
	}
	return nil
}

// SortFunc sorts the slice s by less (a comparison of the elements at i and
// j), stably.
func SortFunc(s any, less func(i, j int) bool) { sort.SliceStable(s, less) }
