package interp

import "testing"

// TestGenericOverlay runs the generic helpers scripts reach for — from
// slices, maps and cmp — on the element types toy's scripts use, from
// interpreted code; yaegi v0.16.1's own slices fails on most of these.
func TestGenericOverlay(t *testing.T) {
	in, _ := newTest(t)
	eval(t, in, "import (\n\"cmp\"\n\"maps\"\n\"slices\"\n)")
	for _, c := range []struct{ src, want string }{
		{`a := []int{3, 1, 2}; slices.Sort(a); a`, "[1 2 3]"},
		{`f32 := []float32{2.5, -1, 0}; slices.Sort(f32); f32`, "[-1 0 2.5]"},
		{`f64 := []float64{2.5, -1, 0}; slices.Sort(f64); f64`, "[-1 0 2.5]"},
		{`s := []string{"b", "c", "a"}; slices.Sort(s); s`, "[a b c]"},
		{`u := []uint16{9, 4}; slices.Sort(u); u`, "[4 9]"}, // by reflection
		{`slices.Contains([]string{"a", "b"}, "b")`, "true"},
		{`slices.Contains([]float32{1, 2}, 3)`, "false"},
		{`slices.Index([]float32{1, 2}, 2)`, "1"},
		{`slices.Index([]int{4, 5}, 6)`, "-1"},
		{`slices.Max([]float64{1, 5, 2}) + 1`, "6"},
		{`slices.Min([]float32{4, -2, 9})`, "-2"},
		{`slices.Max([]string{"x", "yy"})`, `"yy"`},
		{`slices.Min([]int{4, 2}) * 10`, "20"},
		{`r := []string{"x", "y", "z"}; slices.Reverse(r); r`, "[z y x]"},
		{`rf := []float32{1, 2}; slices.Reverse(rf); rf`, "[2 1]"},
		{`slices.IsSorted([]int{1, 2, 2})`, "true"},
		{`i, found := slices.BinarySearch([]int{1, 3, 5}, 4); fmt.Sprint(i, found)`, `"2 false"`},
		{`slices.Equal([]int{1, 2}, []int{1, 2})`, "true"},
		{`slices.Compact([]int{1, 1, 2, 2, 2, 3})`, "[1 2 3]"},
		{`slices.Insert([]int{1, 4}, 1, 2, 3)`, "[1 2 3 4]"},
		{`slices.Clone([]float64{1.5})`, "[1.5]"},
		{`ws := []string{"ccc", "a", "bb"}; slices.SortFunc(ws, func(x, y string) int { return cmp.Compare(len(x), len(y)) }); ws`, "[a bb ccc]"},
		{`m := map[string]int{"b": 2, "a": 1, "c": 3}; slices.Sorted(maps.Keys(m))`, "[a b c]"},
		{`maps.Equal(m, maps.Clone(m))`, "true"},
		{`m2 := map[string]int{}; maps.Copy(m2, m); len(m2)`, "3"},
		{`len(slices.Collect(slices.Values([]int32{7, 8})))`, "2"},
		{`ids := []int32{5, 1}; slices.Sort(ids); ids`, "[1 5]"},
	} {
		if got := eval(t, in, c.src); got != c.want {
			t.Errorf("%s = %s, want %s", c.src, got, c.want)
		}
	}
}
