// The generic overlay: slices, maps and iter as interpreted generic Go that
// yaegi v0.16.1 can instantiate, replacing the
// Go 1.22 sources it ships, whose functions over S ~[]E mostly fail to
// instantiate (slices.Reverse, slices.Index with an untyped constant …) and
// which lack Sort, Max, Min, Keys and the Go 1.23 iterator helpers.
// (maps.Values is missing: yaegi fails to instantiate it; range over the map.
// Variadic slices.Concat fails likewise.)
//
// The functions take []E, not S ~[]E: a named slice type (type Ids []int32)
// is passed converted ([]int32(ids)). Sort and SortFunc run compiled code
// (package instances): slices.Sort itself for []int, []float32, []float64,
// []string, []int32, []int64 and []byte. Iterators (iter.Seq, maps.Keys,
// slices.Values) are plain functions: yaegi v0.16.1 cannot range over
// them, so use them through slices.Collect and slices.Sorted, or call them
// with a yield function.

package interp

import (
	"reflect"

	"github.com/toyml/toy/interp/internal/instances"
)

// instancesPath is where package instances is visible to the overlay.
const instancesPath = "github.com/toyml/toy/interp/internal/instances"

// instanceSymbols are package instances' symbols, for the overlay only.
var instanceSymbols = map[string]map[string]reflect.Value{
	instancesPath + "/instances": {
		"Sort":     reflect.ValueOf(instances.Sort),
		"SortFunc": reflect.ValueOf(instances.SortFunc),
	},
}

// genericSources are compiled into every interpreter after the standard
// library, in this order.
var genericSources = []string{genericIter, genericSlices, genericMaps}

const genericIter = `package iter

// Seq is an iterator over single values: it calls yield with each until
// yield returns false.
type Seq[V any] func(yield func(V) bool)

// Seq2 is an iterator over pairs.
type Seq2[K, V any] func(yield func(K, V) bool)
`

const genericSlices = `package slices

import "github.com/toyml/toy/interp/internal/instances"

type ordered interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64 | ~string
}

// Sort sorts x in ascending order (compiled slices.Sort for the common
// element types).
func Sort[E ordered](x []E) {
	instances.Sort(x)
}

// SortFunc sorts x in ascending order as determined by cmp, stably.
func SortFunc[E any](x []E, cmp func(a, b E) int) {
	instances.SortFunc(x, func(i, j int) bool { return cmp(x[i], x[j]) < 0 })
}

// SortStableFunc sorts x by cmp, keeping the order of equal elements.
func SortStableFunc[E any](x []E, cmp func(a, b E) int) {
	instances.SortFunc(x, func(i, j int) bool { return cmp(x[i], x[j]) < 0 })
}

// IsSorted reports whether x is sorted in ascending order.
func IsSorted[E ordered](x []E) bool {
	for i := 1; i < len(x); i++ {
		if x[i] < x[i-1] {
			return false
		}
	}
	return true
}

// BinarySearch finds target in the sorted x: its index, or where it would
// be inserted, and whether it is there.
func BinarySearch[E ordered](x []E, target E) (int, bool) {
	lo, hi := 0, len(x)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x[m] < target {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(x) && x[lo] == target
}

// Index returns the index of the first occurrence of v in s, or -1.
func Index[E comparable](s []E, v E) int {
	for i := range s {
		if s[i] == v {
			return i
		}
	}
	return -1
}

// IndexFunc returns the first index i satisfying f(s[i]), or -1.
func IndexFunc[E any](s []E, f func(E) bool) int {
	for i := range s {
		if f(s[i]) {
			return i
		}
	}
	return -1
}

// Contains reports whether v is present in s.
func Contains[E comparable](s []E, v E) bool {
	return Index(s, v) >= 0
}

// ContainsFunc reports whether at least one element e of s satisfies f(e).
func ContainsFunc[E any](s []E, f func(E) bool) bool {
	return IndexFunc(s, f) >= 0
}

// Max returns the maximal value in x; it panics if x is empty.
func Max[E ordered](x []E) E {
	if len(x) < 1 {
		panic("slices.Max: empty list")
	}
	m := x[0]
	for i := 1; i < len(x); i++ {
		if x[i] > m {
			m = x[i]
		}
	}
	return m
}

// Min returns the minimal value in x; it panics if x is empty.
func Min[E ordered](x []E) E {
	if len(x) < 1 {
		panic("slices.Min: empty list")
	}
	m := x[0]
	for i := 1; i < len(x); i++ {
		if x[i] < m {
			m = x[i]
		}
	}
	return m
}

// Reverse reverses the elements of s in place.
func Reverse[E any](s []E) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// Equal reports whether two slices are equal: the same length and all
// elements equal.
func Equal[E comparable](s1, s2 []E) bool {
	if len(s1) != len(s2) {
		return false
	}
	for i := range s1 {
		if s1[i] != s2[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of s.
func Clone[E any](s []E) []E {
	if s == nil {
		return nil
	}
	return append([]E{}, s...)
}

// Compact replaces consecutive runs of equal elements with a single copy.
func Compact[E comparable](s []E) []E {
	if len(s) < 2 {
		return s
	}
	i := 1
	for k := 1; k < len(s); k++ {
		if s[k] != s[k-1] {
			s[i] = s[k]
			i++
		}
	}
	return s[:i]
}

// Insert inserts the values v... into s at index i.
func Insert[E any](s []E, i int, v ...E) []E {
	out := make([]E, 0, len(s)+len(v))
	out = append(out, s[:i]...)
	out = append(out, v...)
	return append(out, s[i:]...)
}

// Delete removes the elements s[i:j] from s.
func Delete[E any](s []E, i, j int) []E {
	return append(s[:i], s[j:]...)
}

// Repeat returns a new slice that repeats s count times.
func Repeat[E any](s []E, count int) []E {
	out := make([]E, 0, len(s)*count)
	for i := 0; i < count; i++ {
		out = append(out, s...)
	}
	return out
}

// Values returns an iterator over the slice elements.
func Values[E any](s []E) func(yield func(E) bool) {
	return func(yield func(E) bool) {
		for _, v := range s {
			if !yield(v) {
				return
			}
		}
	}
}

// Collect collects values from seq into a new slice.
func Collect[E any](seq func(yield func(E) bool)) []E {
	var out []E
	seq(func(v E) bool {
		out = append(out, v)
		return true
	})
	return out
}

// Sorted collects values from seq into a new slice, sorts it and returns it.
func Sorted[E ordered](seq func(yield func(E) bool)) []E {
	out := Collect(seq)
	Sort(out)
	return out
}
`

const genericMaps = `package maps

// Keys returns an iterator over the keys of m (see slices.Collect and
// slices.Sorted).
func Keys[K comparable, V any](m map[K]V) func(yield func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Equal reports whether two maps contain the same key/value pairs.
func Equal[K, V comparable](m1, m2 map[K]V) bool {
	if len(m1) != len(m2) {
		return false
	}
	for k := range m1 {
		v2, ok := m2[k]
		if !ok || m1[k] != v2 {
			return false
		}
	}
	return true
}

// Clone returns a copy of m.
func Clone[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k := range m {
		out[k] = m[k]
	}
	return out
}

// Copy copies all key/value pairs in src adding them to dst.
func Copy[K comparable, V any](dst, src map[K]V) {
	for k := range src {
		dst[k] = src[k]
	}
}
`
