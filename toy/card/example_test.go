package card_test

import (
	"fmt"

	"github.com/toyml/toy/toy/card"
)

func ExampleNewDecoder() {
	k := card.NewDecoder("mini", "Mini: a decoder for the example.", 320, 128, 64, 2)
	k.Hyper = append(k.Hyper, card.Hyper{Symbol: "H", Value: card.Int(4), Key: "heads", Meaning: "attention heads"})
	for _, h := range k.Hyper {
		fmt.Println(h.Symbol, "=", h.Value, "·", h.Key)
	}
	// Output:
	// N_V = 320 · vocab_size
	// ℓ_max = 128 · context_length
	// d_e = 64 · embed
	// L = 2 · layers
	// H = 4 · heads
}
