// The card of an architecture that has no card of its own.

package card

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/gguf"
)

// Generic returns the card of the model a GGUF header describes from the
// header alone, for an architecture whose family writes no card: its
// hyperparameters are the metadata keys under "ARCH.", its parameters the
// tensors (those of block 0 stand for every block, with the layer count
// taken from the names), each with its shape and element count. It has no
// steps: the algorithm is the family's code.
func Generic(h *gguf.File) (*Card, error) {
	arch, err := h.Architecture()
	if err != nil {
		return nil, err
	}
	c := &Card{Arch: arch, Title: "Transformer", Summary: "an architecture registered without a card of its own: its metadata and weights"}
	for _, kv := range h.KV {
		key, ok := strings.CutPrefix(kv.Key, arch+".")
		if !ok {
			continue
		}
		v := strings.Join(strings.Fields(fmt.Sprint(kv.Value)), ",") // one field, as ParseCard reads it
		if v == "" {
			v = `""`
		}
		c.Hyper = append(c.Hyper, Hyper{Symbol: key, Value: v, Key: key, Meaning: "metadata " + kv.Key})
	}
	layers := 0
	for _, t := range h.Tensors {
		if m := blockName.FindStringSubmatch(t.Name); m != nil {
			var l int
			fmt.Sscan(m[1], &l)
			layers = max(layers, l+1)
			if l != 0 {
				continue
			}
			c.Params = append(c.Params, Param{Symbol: "blk.l." + m[2], Shape: shape(t.Shape()), Meaning: count(t.Shape()), PerLayer: true})
			continue
		}
		c.Params = append(c.Params, Param{Symbol: t.Name, Shape: shape(t.Shape()), Meaning: count(t.Shape())})
	}
	// Whole-model weights first, then the per-layer ones under one "for l".
	slices.SortStableFunc(c.Params, func(a, b Param) int {
		switch {
		case a.PerLayer == b.PerLayer:
			return 0
		case b.PerLayer:
			return -1
		}
		return 1
	})
	if layers > 0 && !slices.ContainsFunc(c.Hyper, func(h Hyper) bool { return h.Key == "block_count" }) {
		c.Hyper = append(c.Hyper, Hyper{Symbol: "L", Value: Int(layers), Key: "block_count", Meaning: "layers (from the tensor names)"})
	}
	if len(c.Hyper) == 0 {
		c.Hyper = append(c.Hyper, Hyper{Symbol: "-", Value: "-", Key: "-", Meaning: "the file has no " + arch + ".* metadata"})
	}
	return c, nil
}

var blockName = regexp.MustCompile(`^blk\.(\d+)\.(.+)$`)

// shape writes a GGUF shape (outermost first) as "a × b".
func shape(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = Int(d)
	}
	return strings.Join(parts, " × ")
}

func count(s []int) string {
	n := int64(1)
	for _, d := range s {
		n *= int64(d)
	}
	return HumanCount(n) + " parameters"
}
