// Command byoa brings its own architecture to toy: LayerScale, a decoder
// toy does not ship — pre-norm blocks whose two residual branches are each
// scaled by a learned per-channel gain (Touvron et al. 2021, "Going deeper
// with Image Transformers"), with a squared-SiLU feed-forward. It registers
// the family, trains it from scratch through recipes.NewFromModel, resumes a
// checkpoint, saves the model, reloads it with toy.Load, generates, trains
// LoRA on the saved file, merges it and prints the card — printing every
// loss and token as bits, so that the compiled run
//
//	go run ./tests/byoa DIR
//
// and the interpreted one
//
//	toysh tests/byoa/main.go DIR
//
// can be compared byte for byte (TestInterpretedMatchesCompiled).
package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/recipes"
	"github.com/toyml/toy/toy/tensor"
)

// Arch is the family's GGUF architecture name.
const Arch = "layerscale"

// Config is the shape of a LayerScale model.
type Config struct {
	VocabSize, ContextLength int
	Embed, Layers, Heads     int
	FFN                      int
}

// SiLU2 is the block's nonlinearity, a primitive over tensor ops:
// silu(x)², elementwise.
func SiLU2(x *tensor.Tensor) *tensor.Tensor {
	s := tensor.SiLU(x)
	return tensor.Mul(s, s)
}

// Block is one LayerScale block:
//
//	x = x + γ_a ⊙ Attn(RMSNorm(x))
//	x = x + γ_f ⊙ Down(SiLU2(Up(RMSNorm(x))))
type Block struct {
	AttnNorm *nn.RMSNorm
	Attn     *nn.Attention
	AttnGain *tensor.Tensor // [D]
	FFNNorm  *nn.RMSNorm
	Up       *nn.Linear     // [F, D]
	Down     *nn.Linear     // [D, F]
	FFNGain  *tensor.Tensor // [D]
}

// Forward runs the block over x [T, D].
func (b *Block) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	x = tensor.Add(x, tensor.Mul(b.Attn.Forward(b.AttnNorm.Forward(x), cache), b.AttnGain))
	h := b.Down.Forward(SiLU2(b.Up.Forward(b.FFNNorm.Forward(x)))) // [T, D]
	return tensor.Add(x, tensor.Mul(h, b.FFNGain))
}

// Model is a LayerScale decoder.
type Model struct {
	Config Config
	Embed  *nn.Embedding // [V, D]
	Blocks []*Block
	Norm   *nn.RMSNorm // [D]
	Head   *nn.Linear  // [V, D]
}

// New returns a model of shape c with no weights.
func New(c Config) *Model {
	m := &Model{Config: c, Norm: &nn.RMSNorm{Eps: 1e-5}}
	hd := c.Embed / c.Heads
	for range c.Layers {
		m.Blocks = append(m.Blocks, &Block{
			AttnNorm: &nn.RMSNorm{Eps: 1e-5}, FFNNorm: &nn.RMSNorm{Eps: 1e-5},
			Attn: &nn.Attention{Heads: c.Heads, KVHeads: c.Heads, HeadDim: hd, RoPE: &nn.RoPE{Dim: hd, Base: 10000}},
		})
	}
	return m
}

// NewRandom returns a model of shape c with N(0, 0.02²) projections, unit
// norms and gains of 0.1.
func NewRandom(c Config, seed uint64) *Model {
	in := nn.NewInit(seed)
	m := New(c)
	D, F := c.Embed, c.FFN
	m.Embed = &nn.Embedding{W: in.Normal(0.02, c.VocabSize, D)}
	for _, b := range m.Blocks {
		b.AttnNorm.W, b.FFNNorm.W = in.Fill(1, D), in.Fill(1, D)
		b.Attn.Q, b.Attn.K = in.Linear(D, D, 0.02, false), in.Linear(D, D, 0.02, false)
		b.Attn.V, b.Attn.O = in.Linear(D, D, 0.02, false), in.Linear(D, D, 0.02, false)
		b.Up, b.Down = in.Linear(F, D, 0.02, false), in.Linear(D, F, 0.02, false)
		b.AttnGain, b.FFNGain = in.Fill(0.1, D), in.Fill(0.1, D)
	}
	m.Norm.W = in.Fill(1, D)
	m.Head = in.Linear(c.VocabSize, D, 0.02, false)
	return m
}

// Hidden runs ids [T] at positions cache.Len() … and returns [T, D].
func (m *Model) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	x := m.Embed.Forward(ids)
	for i, b := range m.Blocks {
		x = b.Forward(x, cache.Layer(i))
	}
	return m.Norm.Forward(x)
}

// Logits maps hidden states [T, D] to logits [T, V].
func (m *Model) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Head.Forward(h) }

// NewCache returns a KV cache for capacity positions.
func (m *Model) NewCache(capacity int) *nn.Cache {
	return nn.NewCache(m.Config.Layers, capacity, m.Config.Embed)
}

// VocabSize returns V.
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// ContextLength returns the trained context.
func (m *Model) ContextLength() int { return m.Config.ContextLength }

// Weights lists every weight under its GGUF name.
func (m *Model) Weights() []nn.Named {
	ws := []nn.Named{{Name: "token_embd.weight", T: m.Embed.W}}
	for i, b := range m.Blocks {
		p := fmt.Sprintf("blk.%d.", i)
		ws = append(ws,
			nn.Named{Name: p + "attn_norm.weight", T: b.AttnNorm.W},
			nn.Named{Name: p + "attn_q.weight", T: b.Attn.Q.W},
			nn.Named{Name: p + "attn_k.weight", T: b.Attn.K.W},
			nn.Named{Name: p + "attn_v.weight", T: b.Attn.V.W},
			nn.Named{Name: p + "attn_output.weight", T: b.Attn.O.W},
			nn.Named{Name: p + "attn_gain.weight", T: b.AttnGain},
			nn.Named{Name: p + "ffn_norm.weight", T: b.FFNNorm.W},
			nn.Named{Name: p + "ffn_up.weight", T: b.Up.W},
			nn.Named{Name: p + "ffn_down.weight", T: b.Down.W},
			nn.Named{Name: p + "ffn_gain.weight", T: b.FFNGain})
	}
	return append(ws, nn.Named{Name: "output_norm.weight", T: m.Norm.W}, nn.Named{Name: "output.weight", T: m.Head.W})
}

// SetMetadata writes the architecture and its shape.
func (m *Model) SetMetadata(w *gguf.Writer) {
	c := m.Config
	w.SetString("general.architecture", Arch)
	w.SetUint32(Arch+".context_length", uint32(c.ContextLength))
	w.SetUint32(Arch+".embedding_length", uint32(c.Embed))
	w.SetUint32(Arch+".block_count", uint32(c.Layers))
	w.SetUint32(Arch+".attention.head_count", uint32(c.Heads))
	w.SetUint32(Arch+".feed_forward_length", uint32(c.FFN))
	w.SetUint32(Arch+".vocab_size", uint32(c.VocabSize))
}

// Load builds a model over a GGUF file's tensors.
func Load(f *gguf.File) (models.Model, error) {
	meta := f.Meta(Arch)
	c := Config{VocabSize: meta.Uint("vocab_size"), ContextLength: meta.Uint("context_length"),
		Embed: meta.Uint("embedding_length"), Layers: meta.Uint("block_count"),
		Heads: meta.Uint("attention.head_count"), FFN: meta.Uint("feed_forward_length")}
	if err := meta.Err(); err != nil {
		return nil, err
	}
	if c.Heads <= 0 || c.Embed%c.Heads != 0 {
		return nil, fmt.Errorf("%d heads do not divide width %d", c.Heads, c.Embed)
	}
	m := New(c)
	var err error
	get := func(name string) *tensor.Tensor {
		t, e := f.Tensor(name)
		if e != nil && err == nil {
			err = e
		}
		return t
	}
	m.Embed = &nn.Embedding{W: get("token_embd.weight")}
	for i, b := range m.Blocks {
		p := fmt.Sprintf("blk.%d.", i)
		b.AttnNorm.W, b.FFNNorm.W = get(p+"attn_norm.weight"), get(p+"ffn_norm.weight")
		b.Attn.Q, b.Attn.K = &nn.Linear{W: get(p + "attn_q.weight")}, &nn.Linear{W: get(p + "attn_k.weight")}
		b.Attn.V, b.Attn.O = &nn.Linear{W: get(p + "attn_v.weight")}, &nn.Linear{W: get(p + "attn_output.weight")}
		b.Up, b.Down = &nn.Linear{W: get(p + "ffn_up.weight")}, &nn.Linear{W: get(p + "ffn_down.weight")}
		b.AttnGain, b.FFNGain = get(p+"attn_gain.weight"), get(p+"ffn_gain.weight")
	}
	m.Norm.W, m.Head = get("output_norm.weight"), &nn.Linear{W: get("output.weight")}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func init() {
	models.Register(models.Family{
		Arch: Arch, Summary: "pre-norm decoder with LayerScale gains and a squared-SiLU MLP", Config: Config{},
		Load: Load,
		New: func(cfg any, seed uint64) (models.Model, error) {
			return NewRandom(cfg.(Config), seed), nil
		},
	})
}

// batchAt is step's batch: 4 sequences of a pattern the model can learn.
func batchAt(step, context, vocab int) *engine.Batch {
	var seqs [][]int32
	for b := range 4 {
		var s []int32
		start := (step*4 + b) * 5
		for j := range context + 1 {
			s = append(s, int32((start+j*3)%vocab))
		}
		seqs = append(seqs, s)
	}
	batch, err := engine.NewBatch(seqs, vocab, -1)
	check(err)
	return batch
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "byoa:", err)
		os.Exit(1)
	}
}

// train runs r from its step to its last, printing each loss's bits, and
// checkpoints after step at (0: never) into ckpt.
func train(name string, r *recipes.Recipe, at int, ckpt string) []float32 {
	var losses []float32
	for r.Steps < r.Options.Steps {
		loss, err := r.Step(batchAt(r.Steps, r.Options.Context, r.Model.VocabSize()))
		check(err)
		losses = append(losses, loss)
		fmt.Printf("%s step %d loss %.6f bits %08x\n", name, r.Steps, loss, math.Float32bits(loss))
		if r.Steps == at {
			check(r.SaveCheckpoint(ckpt))
		}
	}
	return losses
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: byoa DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	check(os.MkdirAll(dir, 0o755))
	ckpt, saved := filepath.Join(dir, "ckpt.gguf"), filepath.Join(dir, "model.gguf")

	// From scratch, through NewFromModel, with a checkpoint after step 26.
	cfg := Config{VocabSize: 48, ContextLength: 32, Embed: 32, Layers: 2, Heads: 4, FFN: 64}
	o := recipes.NewOptions(16).WithSteps(30).WithLR(1e-2).WithWarmup(2).WithSeed(7)
	r, err := recipes.NewFromModel(NewRandom(cfg, 7), o)
	check(err)
	losses := train("scratch", r, 26, ckpt)
	if !(losses[len(losses)-1] < losses[0]/2) {
		check(fmt.Errorf("the loss did not halve: %v → %v", losses[0], losses[len(losses)-1]))
	}

	// Resume: the last steps again, bit for bit.
	resumed, err := recipes.Resume(ckpt)
	check(err)
	again := train("resumed", resumed, 0, "")
	for i, l := range again {
		if want := losses[26+i]; l != want {
			check(fmt.Errorf("resumed step %d: loss %v, straight %v", 27+i, l, want))
		}
	}
	fmt.Println("resume bit-identical")

	// Save, reload with toy.Load, generate.
	check(r.SaveModel(saved))
	m, err := toy.Load(saved)
	check(err)
	ids, err := m.Generate([]int32{0, 3}, toy.GenerateOptions{MaxTokens: 12})
	check(err)
	fmt.Println("generated", ids)
	m.Close()

	// LoRA on the saved file, merged into a new model.
	lo := recipes.NewOptions(16).WithSteps(6).WithLR(1e-2).WithSeed(3).WithRank(4).WithTargets("q", "v", "up")
	lr, err := recipes.NewLoRA(saved, lo)
	check(err)
	fmt.Println("lora parameters", len(lr.Params))
	train("lora", lr, 0, "")
	adapter, merged := filepath.Join(dir, "adapter.gguf"), filepath.Join(dir, "merged.gguf")
	check(lr.SaveAdapter(adapter))
	check(recipes.MergeAdapter(saved, adapter, merged))
	mm, err := toy.Load(merged)
	check(err)
	ids, err = mm.Generate([]int32{0, 3}, toy.GenerateOptions{MaxTokens: 12})
	check(err)
	fmt.Println("merged generated", ids)
	mm.Close()

	// The card: generic, from the header.
	c, err := card.Describe(merged)
	check(err)
	fmt.Print(c.Render())
}
