// The card IR, the family registry, and cards from GGUF headers.

package card

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/toyml/toy/toy/tensor"

	"github.com/toyml/toy/toy/gguf"
)

// Sentinel errors.
var (
	ErrUnknownArch = errors.New("card: no card for this architecture")
	ErrSyntax      = errors.New("card: cannot read card")
)

// Card is one model's algorithm, in the notation of Phuong & Hutter.
type Card struct {
	Arch       string   `json:"arch"`            // GGUF architecture
	Name       string   `json:"name,omitempty"`  // general.name
	ParamCount int64    `json:"params"`          // elements in all weights
	Quant      string   `json:"quant,omitempty"` // Q8_0, Q4_K_M, F16, …
	Title      string   `json:"title"`           // the algorithm's name, "DTransformer"
	Summary    string   `json:"summary"`         // one line on the family
	Inputs     []string `json:"inputs"`
	Outputs    []string `json:"outputs"`
	Hyper      []Hyper  `json:"hyperparameters"`
	Params     []Param  `json:"parameters"`
	Steps      []Step   `json:"steps"`
	Notes      []string `json:"notes,omitempty"` // what toy cannot run yet, and similar
}

// Hyper is one hyperparameter: its symbol in the pseudocode, its value, the
// key that names it in the family's Config (snake_case), and its meaning.
type Hyper struct {
	Symbol  string `json:"symbol"`
	Value   string `json:"value"`
	Key     string `json:"key"`
	Meaning string `json:"meaning"`
}

// Param is one weight: symbol, shape in hyperparameter symbols, meaning.
// PerLayer weights exist once per layer l ∈ [L].
type Param struct {
	Symbol   string `json:"symbol"`
	Shape    string `json:"shape"`
	Meaning  string `json:"meaning"`
	PerLayer bool   `json:"per_layer,omitempty"`
}

// Step is one numbered line of the algorithm. Depth is its indentation; Shape
// annotates the value it computes ("d_e × ℓ").
type Step struct {
	Depth int    `json:"depth"`
	Text  string `json:"text"`
	Shape string `json:"shape,omitempty"`
}

// Family connects a model package's Config to cards. models.Register
// registers one for every architecture family; FromHeader and Config may be
// nil (Generic cards, no Config from a card).
type Family struct {
	Archs []string // GGUF architectures it reads, "llama", "qwen2"
	// FromHeader returns the card of the model that the header describes.
	// It reads metadata only and does not fail on features toy cannot run
	// yet: it lists them in Notes.
	FromHeader func(h *gguf.File) (*Card, error)
	// Config returns the family's Config (a value, e.g. llama.Config) from a
	// card's hyperparameters.
	Config func(c *Card) (any, error)
}

var (
	familiesMu sync.RWMutex
	families   = map[string]Family{}
)

// Register makes a family's cards available. models.Register calls it for
// every registered architecture; a model package does not call it itself.
func Register(f Family) {
	familiesMu.Lock()
	defer familiesMu.Unlock()
	for _, a := range f.Archs {
		families[a] = f
	}
}

// Archs returns the architectures with a registered family, sorted.
func Archs() []string {
	familiesMu.RLock()
	defer familiesMu.RUnlock()
	var a []string
	for k := range families {
		a = append(a, k)
	}
	slices.Sort(a)
	return a
}

func family(arch string) (Family, error) {
	familiesMu.RLock()
	f, ok := families[arch]
	familiesMu.RUnlock()
	if !ok {
		return f, fmt.Errorf("%w %q (cards exist for %s)", ErrUnknownArch, arch, strings.Join(Archs(), ", "))
	}
	return f, nil
}

// FromHeader returns the card of the model whose GGUF metadata and tensor
// descriptors are h, with the parameter count summed over its tensors and its
// quantization. It reads no weights, and files of any ggml type (Q4_K, …)
// are described.
func FromHeader(h *gguf.File) (*Card, error) {
	arch, err := h.Architecture()
	if err != nil {
		return nil, err
	}
	f, err := family(arch)
	if err != nil {
		return nil, err
	}
	fromHeader := f.FromHeader
	if fromHeader == nil {
		fromHeader = Generic
	}
	c, err := fromHeader(h)
	if err != nil {
		return nil, err
	}
	for _, t := range h.Tensors { // one note for any family's file
		if !t.Type.Known() {
			c.Notes = append(c.Notes, fmt.Sprintf("toy computes with F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS and MXFP4 weights; this file also holds %s (e.g. %s)", t.Type, t.Name))
			break
		}
	}
	c.Name, _ = h.String("general.name")
	c.ParamCount = h.ParamCount()
	c.Quant = h.Quant()
	return c, nil
}

// Describe reads the header of the GGUF file at path and returns its card.
func Describe(path string) (*Card, error) {
	h, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
	}
	defer h.Close()
	c, err := FromHeader(h)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
	}
	return c, nil
}

// Parse reads a rendered card and returns its family's Config (for example a
// llama.Config value).
func Parse(text string) (any, error) {
	c, err := ParseCard(text)
	if err != nil {
		return nil, err
	}
	f, err := family(c.Arch)
	if err != nil {
		return nil, err
	}
	if f.Config == nil {
		return nil, fmt.Errorf("%w %q: its family reads no configuration from a card", ErrUnknownArch, c.Arch)
	}
	return f.Config(c)
}

// Value returns the value of the hyperparameter with the given Config key.
func (c *Card) Value(key string) (string, error) {
	for _, h := range c.Hyper {
		if h.Key == key {
			return h.Value, nil
		}
	}
	return "", fmt.Errorf("%w: hyperparameter %s is missing", ErrSyntax, key)
}

// Int returns an integer hyperparameter.
func (c *Card) Int(key string) (int, error) {
	s, err := c.Value(key)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s = %q is not an integer", ErrSyntax, key, s)
	}
	return v, nil
}

// Float32 returns a real hyperparameter.
func (c *Card) Float32(key string) (float32, error) {
	s, err := c.Value(key)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s = %q is not a number", ErrSyntax, key, s)
	}
	return float32(v), nil
}

// Bool returns a yes/no hyperparameter.
func (c *Card) Bool(key string) (bool, error) {
	s, err := c.Value(key)
	if err != nil {
		return false, err
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%w: %s = %q is not true or false", ErrSyntax, key, s)
	}
	return v, nil
}

// Int formats an integer hyperparameter value.
func Int(v int) string { return strconv.Itoa(v) }

// Float formats a float32 hyperparameter so that it parses back exactly.
func Float(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// Bool formats a yes/no hyperparameter value.
func Bool(v bool) string { return strconv.FormatBool(v) }

// HumanCount writes a parameter count briefly: 134.5M, 1.24B, 7.5K.
func HumanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// DominantType names the element type holding the most elements among the
// weights ws (nil entries skipped), "" when there are none: the quantization
// of a model built in memory.
func DominantType(ws []*tensor.Tensor) string {
	count := map[tensor.DType]int{}
	best, n := tensor.DType(0), 0
	for _, w := range ws {
		if w == nil {
			continue
		}
		count[w.DType()] += w.Len()
		if count[w.DType()] > n {
			best, n = w.DType(), count[w.DType()]
		}
	}
	if n == 0 {
		return ""
	}
	return best.String()
}

// NewDecoder returns the card of a decoder-only language model of
// architecture arch — Phuong & Hutter's DTransformer — with what every
// decoder's card has: its input (token ids) and output (next-token
// distributions), and its first hyperparameters N_V, ℓ_max, d_e and L. The
// family appends the rest.
func NewDecoder(arch, summary string, vocab, context, embed, layers int) *Card {
	return &Card{
		Arch: arch, Title: "DTransformer", Summary: summary,
		Inputs:  []string{"x ∈ [N_V]^ℓ, a sequence of token ids, ℓ ≤ ℓ_max"},
		Outputs: []string{"P ∈ (0, 1)^{N_V × ℓ}, where column t is the distribution P̂(x[t+1] | x[1:t])"},
		Hyper: []Hyper{
			{Symbol: "N_V", Value: Int(vocab), Key: "vocab_size", Meaning: "vocabulary size"},
			{Symbol: "ℓ_max", Value: Int(context), Key: "context_length", Meaning: "trained context length"},
			{Symbol: "d_e", Value: Int(embed), Key: "embed", Meaning: "model width"},
			{Symbol: "L", Value: Int(layers), Key: "layers", Meaning: "layers"},
		},
	}
}
