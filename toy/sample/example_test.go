package sample_test

import (
	"fmt"

	"github.com/toyml/toy/toy/sample"
)

func ExampleGreedy() {
	logits := []float32{1, 3, 2, 3} // ids 1 and 3 tie
	fmt.Println(sample.Greedy(logits))
	// Output:
	// 1
}

// With TopK 2 only the two highest logits can be drawn: id 1 with probability
// e³/(e³+e²) = 0.73, id 2 with 0.27. The same seed gives the same draws.
func ExampleSampler_Sample() {
	logits := []float32{1, 3, 2, 0.5}
	draw := func(seed uint64) []int32 {
		s := sample.New(sample.Params{Temperature: 1, TopK: 2, Seed: seed})
		var ids []int32
		for range 12 {
			ids = append(ids, s.Sample(logits, ids))
		}
		return ids
	}
	fmt.Println(draw(7))
	fmt.Println(draw(7))

	greedy := sample.New(sample.Params{}) // the zero Params: temperature 0
	fmt.Println(greedy.Sample(logits, nil))
	// Output:
	// [2 1 1 1 1 2 2 1 2 1 1 2]
	// [2 1 1 1 1 2 2 1 2 1 1 2]
	// 1
}
