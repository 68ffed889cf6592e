// A card's parameters from the weights a model declares.

package models

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// CardFromFile fills k's Params, ParamCount and Quant for the model file h
// describes: the weights skeleton (a model made for cfg, its weights not
// needed) declares, as far as h holds them (see CardParams); the count is
// theirs, so tensors toy does not load are not counted.
func CardFromFile(k *card.Card, h *gguf.File, skeleton, cfg any) *card.Card {
	have := map[string][]int{}
	for _, t := range h.Tensors {
		have[t.Name] = t.Shape()
	}
	k.Params, k.ParamCount = CardParams(skeleton, cfg, have)
	k.Quant = h.Quant()
	return k
}

// CardFromModel fills k's Params, ParamCount and Quant from m's weights (a
// Model, or an encoder that lists its weights):
// the quantization is the most common type of its matrices (none for fresh
// F32 ones).
func CardFromModel(k *card.Card, m interface{ Weights() []nn.Named }, cfg any) *card.Card {
	have := map[string][]int{}
	var mats []*tensor.Tensor
	for _, w := range m.Weights() {
		have[w.Name] = w.T.Shape()
		if len(w.T.Shape()) > 1 {
			mats = append(mats, w.T)
		}
	}
	k.Params, k.ParamCount = CardParams(m, cfg, have)
	k.Quant = card.DominantType(mats)
	return k
}

// Lacking adds a note to k for each feature the file uses that toy does not
// run yet (a family's readConfig lists them, so that every file of the
// family can be described, if not run).
func Lacking(k *card.Card, lacking []string) *card.Card {
	for _, l := range lacking {
		k.Notes = append(k.Notes, l+" is not in this card, and toy does not run it yet")
	}
	return k
}

var blockName = regexp.MustCompile(`^(.*?)blk\.\d+\.(.+)$`)

// CardParams lists the weights m declares (nn.DeclaredWeights) that have
// holds, by GGUF name with their shapes, and counts their elements: each
// with the symbol and meaning of its field's card tag (a bias: b for W, β
// for γ), its shape in cfg's symbols (card.ShapeText; the numbers when
// undeclared). A block's weights (blk.N.…) are listed once, as per-layer
// parameters, in the order of their first appearance, and one that only
// some layers hold says so; weights declared after the blocks (the final
// norm, the head) come after them.
func CardParams(m, cfg any, have map[string][]int) ([]card.Param, int64) {
	var top, layer, tail []card.Param
	var count int64
	seen := map[string]bool{}  // full names listed
	index := map[string]int{}  // per-layer base name → index in layer
	layers := map[string]int{} // per-layer base name → layers holding it
	blocks := map[string]bool{}
	for _, d := range nn.DeclaredWeights(m, cfg) {
		shape, ok := have[d.Name]
		if !ok || seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		n := int64(1)
		for _, s := range shape {
			n *= int64(s)
		}
		count += n
		p := param(d, shape, cfg)
		bm := blockName.FindStringSubmatch(d.Name)
		switch {
		case bm == nil && len(blocks) > 0:
			tail = append(tail, p)
			continue
		case bm == nil:
			top = append(top, p)
			continue
		}
		blocks[strings.TrimSuffix(d.Name, bm[2])] = true
		base := bm[1] + bm[2]
		layers[base]++
		if _, dup := index[base]; dup {
			continue
		}
		p.PerLayer = true
		p.Symbol = perLayer(p.Symbol)
		index[base] = len(layer)
		layer = append(layer, p)
	}
	for base, i := range index {
		if layers[base] < len(blocks) {
			layer[i].Meaning += fmt.Sprintf(" (%d of the %d layers)", layers[base], len(blocks))
		}
	}
	return append(append(top, layer...), tail...), count
}

func param(d nn.Declared, shape []int, cfg any) card.Param {
	sym, meaning, _ := strings.Cut(d.Card, ",")
	sym, meaning = strings.TrimSpace(sym), strings.TrimSpace(meaning)
	if sym == "" {
		sym = d.Name
		if m := blockName.FindStringSubmatch(d.Name); m != nil {
			sym = m[1] + m[2]
		}
	} else if d.Bias {
		switch {
		case strings.HasPrefix(sym, "W"):
			sym, meaning = "b"+sym[1:], "its bias"
		case strings.HasPrefix(sym, "γ"):
			sym, meaning = "β"+strings.TrimPrefix(sym, "γ"), "its offset"
		default:
			sym, meaning = sym+" bias", "its bias"
		}
	}
	text := ""
	for i, dims := range d.Dims {
		if slices.Equal(dims, shape) {
			text = card.ShapeText(d.Exprs[i], cfg)
			break
		}
	}
	if text == "" {
		parts := make([]string, len(shape))
		for i, n := range shape {
			parts[i] = fmt.Sprint(n)
		}
		text = strings.Join(parts, " × ")
	}
	return card.Param{Symbol: sym, Shape: text, Meaning: meaning}
}

// perLayer marks a symbol as layer l's: W_q^l, W_gate^{l,e}.
func perLayer(sym string) string {
	if base, sup, ok := strings.Cut(sym, "^"); ok {
		return base + "^{l," + strings.Trim(sup, "{}") + "}"
	}
	return sym + "^l"
}
