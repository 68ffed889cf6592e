package interp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/recipes"
	"github.com/toyml/toy/toy/tensor"
)

// bigramSrc is a user's architecture, interpreted: an embedding, an
// interpreted RMS norm layer held as an nn.Layer, and an output head —
// h = Norm(E[id]) [T, D], logits = h·Hᵀ [T, V]. ARCH is replaced by a name
// of each test's own (the registry is the process's), and so is the
// configuration's marker field: yaegi gives structurally equal interpreted
// types one reflect type, and models.ForConfig finds families by it.
// cBigram below is the same code compiled.
const bigramSrc = `
import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/recipes"
	"github.com/toyml/toy/toy/tensor"
)

type Config struct {
	V, D  int
	ARCH_ bool
}

// Norm is RMS normalisation with a gain, an nn.Layer.
type Norm struct{ W *tensor.Tensor }

func (n *Norm) Forward(x *tensor.Tensor) *tensor.Tensor { return tensor.RMSNorm(x, n.W, 1e-5) }

type Bigram struct {
	Config Config
	Embed  *nn.Embedding
	Norm   nn.Layer
	Head   *nn.Linear
}

func New(c Config) *Bigram { return &Bigram{Config: c} }

func NewRandom(c Config, seed uint64) *Bigram {
	in := nn.NewInit(seed)
	m := New(c)
	m.Embed, m.Norm = &nn.Embedding{W: in.Normal(0.5, c.V, c.D)}, &Norm{W: in.Fill(1, c.D)}
	m.Head = in.Linear(c.V, c.D, 0.5, false)
	return m
}

func (m *Bigram) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	return m.Norm.Forward(m.Embed.Forward(ids))
}
func (m *Bigram) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Head.Forward(h) }
func (m *Bigram) NewCache(capacity int) *nn.Cache      { return nn.NewCache(1, capacity, m.Config.D) }
func (m *Bigram) VocabSize() int                       { return m.Config.V }
func (m *Bigram) ContextLength() int                   { return 64 }

func (m *Bigram) Weights() []nn.Named {
	return []nn.Named{{Name: "token_embd.weight", T: m.Embed.W}, {Name: "output_norm.weight", T: m.Norm.(*Norm).W},
		{Name: "output.weight", T: m.Head.W}}
}

func (m *Bigram) SetMetadata(w *gguf.Writer) {
	w.SetString("general.architecture", "ARCH")
	w.SetUint32("ARCH.vocab_size", uint32(m.Config.V))
	w.SetUint32("ARCH.embedding_length", uint32(m.Config.D))
}

func Load(f *gguf.File) (models.Model, error) {
	meta := f.Meta("ARCH")
	m := New(Config{V: meta.Uint("vocab_size"), D: meta.Uint("embedding_length")})
	if err := meta.Err(); err != nil {
		return nil, err
	}
	var err error
	get := func(name string) *tensor.Tensor {
		t, e := f.Tensor(name)
		if e != nil && err == nil {
			err = e
		}
		return t
	}
	m.Embed, m.Norm, m.Head = &nn.Embedding{W: get("token_embd.weight")}, &Norm{W: get("output_norm.weight")}, &nn.Linear{W: get("output.weight")}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Halve halves the rate every Every steps.
type Halve struct {
	Base  float64
	Every int
}

func (h Halve) LR(step int) float64 { return h.Base * math.Pow(0.5, float64(step/h.Every)) }

func batchAt(step, v int) *engine.Batch {
	var seqs [][]int32
	for b := range 3 {
		var s []int32
		for j := range 9 {
			s = append(s, int32((step*3+b+j*2)%v))
		}
		seqs = append(seqs, s)
	}
	batch, err := engine.NewBatch(seqs, v, -1)
	if err != nil {
		panic(err)
	}
	return batch
}

func train(r *recipes.Recipe, steps int) []uint32 {
	var bits []uint32
	for range steps {
		loss, err := r.Step(batchAt(r.Steps, r.Model.VocabSize()))
		if err != nil {
			panic(err)
		}
		bits = append(bits, math.Float32bits(loss))
	}
	return bits
}

var _ = fmt.Sprint
var _ optim.Schedule
`

// Compiled twin of bigramSrc.

type cConfig struct{ V, D int }

type cNorm struct{ W *tensor.Tensor }

func (n *cNorm) Forward(x *tensor.Tensor) *tensor.Tensor { return tensor.RMSNorm(x, n.W, 1e-5) }

type cBigram struct {
	Config cConfig
	Embed  *nn.Embedding
	Norm   nn.Layer
	Head   *nn.Linear
}

func cNewRandom(c cConfig, seed uint64) *cBigram {
	in := nn.NewInit(seed)
	m := &cBigram{Config: c}
	m.Embed, m.Norm = &nn.Embedding{W: in.Normal(0.5, c.V, c.D)}, &cNorm{W: in.Fill(1, c.D)}
	m.Head = in.Linear(c.V, c.D, 0.5, false)
	return m
}

func (m *cBigram) Hidden(ids []int32, cache *nn.Cache) *tensor.Tensor {
	return m.Norm.Forward(m.Embed.Forward(ids))
}
func (m *cBigram) Logits(h *tensor.Tensor) *tensor.Tensor { return m.Head.Forward(h) }
func (m *cBigram) NewCache(capacity int) *nn.Cache        { return nn.NewCache(1, capacity, m.Config.D) }
func (m *cBigram) VocabSize() int                         { return m.Config.V }
func (m *cBigram) ContextLength() int                     { return 64 }
func (m *cBigram) Weights() []nn.Named {
	return []nn.Named{{Name: "token_embd.weight", T: m.Embed.W}, {Name: "output_norm.weight", T: m.Norm.(*cNorm).W},
		{Name: "output.weight", T: m.Head.W}}
}
func (m *cBigram) SetMetadata(w *gguf.Writer) {
	w.SetString("general.architecture", "cbigram")
	w.SetUint32("cbigram.vocab_size", uint32(m.Config.V))
	w.SetUint32("cbigram.embedding_length", uint32(m.Config.D))
}

var registerTwin = sync.OnceFunc(func() {
	models.Register(models.Family{Arch: "cbigram", Load: func(f *gguf.File) (models.Model, error) {
		meta := f.Meta("cbigram")
		m := &cBigram{Config: cConfig{V: meta.Uint("vocab_size"), D: meta.Uint("embedding_length")}}
		e, err1 := f.Tensor("token_embd.weight")
		n, err2 := f.Tensor("output_norm.weight")
		h, err3 := f.Tensor("output.weight")
		if err := errors.Join(meta.Err(), err1, err2, err3); err != nil {
			return nil, err
		}
		m.Embed, m.Norm, m.Head = &nn.Embedding{W: e}, &cNorm{W: n}, &nn.Linear{W: h}
		return m, nil
	}})
})

type cHalve struct {
	Base  float64
	Every int
}

func (h cHalve) LR(step int) float64 { return h.Base * math.Pow(0.5, float64(step/h.Every)) }

func cBatchAt(step, v int) *engine.Batch {
	var seqs [][]int32
	for b := range 3 {
		var s []int32
		for j := range 9 {
			s = append(s, int32((step*3+b+j*2)%v))
		}
		seqs = append(seqs, s)
	}
	batch, err := engine.NewBatch(seqs, v, -1)
	if err != nil {
		panic(err)
	}
	return batch
}

func cTrain(t *testing.T, r *recipes.Recipe, steps int) []uint32 {
	var bits []uint32
	for range steps {
		loss, err := r.Step(cBatchAt(r.Steps, r.Model.VocabSize()))
		if err != nil {
			t.Fatal(err)
		}
		bits = append(bits, math.Float32bits(loss))
	}
	return bits
}

var testOptions = recipes.NewOptions(8).WithSteps(6).WithLR(5e-2).WithWarmup(1).WithSeed(3)

// newBigram returns an interpreter holding bigramSrc for architecture arch.
func newBigram(t *testing.T, arch string) (*Interp, *strings.Builder) {
	t.Helper()
	var out strings.Builder
	in, err := New(Options{Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Eval(context.Background(), strings.ReplaceAll(bigramSrc, "ARCH", arch)); err != nil {
		t.Fatalf("bigram: %v\n%s", err, out.String())
	}
	return in, &out
}

// value evaluates src and returns its value as a T.
func value[T any](t *testing.T, in *Interp, src string) T {
	t.Helper()
	r, err := in.Eval(context.Background(), src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if len(r.Values) != 1 {
		t.Fatalf("%s: %d values", src, len(r.Values))
	}
	v, ok := r.Values[0].Interface().(T)
	if !ok {
		t.Fatalf("%s: %s, not %T", src, r.Values[0].Type(), v)
	}
	return v
}

// TestCrossNewFromModel: an interpreted models.Model, passed straight from
// the call that builds it, trains through recipes.NewFromModel under an
// interpreted optim.Schedule, to the bit of the same code compiled.
func TestCrossNewFromModel(t *testing.T) {
	in, _ := newBigram(t, "xbigram1")
	eval(t, in, `o := recipes.NewOptions(8).WithSteps(6).WithLR(5e-2).WithWarmup(1).WithSeed(3)
r, err := recipes.NewFromModel(NewRandom(Config{V: 11, D: 8}, 7), o)
if err != nil { panic(err) }
r.Schedule = Halve{Base: 0.05, Every: 2}`)
	got := value[[]uint32](t, in, `train(r, 6)`)
	if lr := value[float64](t, in, `r.LR()`); lr != 0.05/8 {
		t.Errorf("interpreted schedule: LR at step 6 %v, want %v", lr, 0.05/8)
	}

	r, err := recipes.NewFromModel(cNewRandom(cConfig{V: 11, D: 8}, 7), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	r.Schedule = cHalve{Base: 0.05, Every: 2}
	want := cTrain(t, r, 6)
	if !slices.Equal(got, want) {
		t.Errorf("interpreted losses %08x\ncompiled            %08x", got, want)
	}
	if !(math.Float32frombits(got[5]) < math.Float32frombits(got[0])) {
		t.Errorf("the loss did not fall: %08x", got)
	}
}

// TestCrossRegisteredFamily: an interpreted family's New is called by
// recipes.NewFromScratch and its Load by toy.Load (compiled code calling the
// interpreted functions registered in models.Family), and what it loads
// generates the tokens the compiled twin does.
func TestCrossRegisteredFamily(t *testing.T) {
	registerTwin()
	dir := t.TempDir()
	in, _ := newBigram(t, "xbigram2")
	eval(t, in, `models.Register(models.Family{Arch: "xbigram2", Summary: "interpreted bigram", Config: Config{},
	Load: Load,
	New: func(cfg any, seed uint64) (models.Model, error) { return NewRandom(cfg.(Config), seed), nil }})`)
	eval(t, in, fmt.Sprintf(`r, err := recipes.NewFromScratch(Config{V: 11, D: 8}, recipes.NewOptions(8).WithSteps(6).WithLR(5e-2).WithWarmup(1).WithSeed(7))
if err != nil { panic(err) }
train(r, 6)
if err := r.SaveModel(%q); err != nil { panic(err) }`, filepath.Join(dir, "i.gguf")))

	// toy.Load, compiled, through the registry's interpreted Load.
	m, err := toy.Load(filepath.Join(dir, "i.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Generate([]int32{0, 2}, toy.GenerateOptions{MaxTokens: 8})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	// And from the interpreter.
	again := value[[]int32](t, in, fmt.Sprintf(`m, err := toy.Load(%q)
if err != nil { panic(err) }
ids, err := m.Generate([]int32{0, 2}, toy.GenerateOptions{MaxTokens: 8})
if err != nil { panic(err) }
ids`, filepath.Join(dir, "i.gguf")))

	r, err := recipes.NewFromModel(cNewRandom(cConfig{V: 11, D: 8}, 7), testOptions.WithSeed(7))
	if err != nil {
		t.Fatal(err)
	}
	cTrain(t, r, 6)
	if err := r.SaveModel(filepath.Join(dir, "c.gguf")); err != nil {
		t.Fatal(err)
	}
	cm, err := toy.Load(filepath.Join(dir, "c.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	want, err := cm.Generate([]int32{0, 2}, toy.GenerateOptions{MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || !slices.Equal(again, want) {
		t.Errorf("generated %v (compiled caller), %v (interpreted caller); compiled twin %v", got, again, want)
	}
}

// TestCrossSession: an interpreted engine.Model, passed straight from its
// constructor and through a conversion, runs in engine.NewSession.
func TestCrossSession(t *testing.T) {
	in, _ := newBigram(t, "xbigram3")
	got := value[[]float32](t, in, `s := engine.NewSession(NewRandom(Config{V: 11, D: 8}, 5), 16)
logits, err := s.Next([]int32{1, 4, 2})
if err != nil { panic(err) }
s2 := engine.NewSession(engine.Model(NewRandom(Config{V: 11, D: 8}, 5)), 16)
logits2, err := s2.Next([]int32{1, 4, 2})
if err != nil || fmt.Sprint(logits) != fmt.Sprint(logits2) { panic(fmt.Sprint("conversion: ", err)) }
logits`)
	want, err := engine.NewSession(cNewRandom(cConfig{V: 11, D: 8}, 5), 16).Next([]int32{1, 4, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("interpreted logits %v\ncompiled %v", got, want)
	}
}

// TestCrossLayer: interpreted nn.Layers in a compiled struct literal
// (nn.Block's norms and feed-forward), run by the compiled block.
func TestCrossLayer(t *testing.T) {
	in, _ := newBigram(t, "xbigram4")
	eval(t, in, `type FFN struct{ Up, Down *nn.Linear }
func (f *FFN) Forward(x *tensor.Tensor) *tensor.Tensor { return f.Down.Forward(tensor.GELU(f.Up.Forward(x))) }
func newFFN(in *nn.Init) *FFN { return &FFN{Up: in.Linear(16, 8, 0.3, false), Down: in.Linear(8, 16, 0.3, false)} }`)
	got := value[[]float32](t, in, `ini := nn.NewInit(9)
att := &nn.Attention{Heads: 2, KVHeads: 2, HeadDim: 4, RoPE: &nn.RoPE{Dim: 4, Base: 10000}}
att.Q, att.K, att.V, att.O = ini.Linear(8, 8, 0.3, false), ini.Linear(8, 8, 0.3, false), ini.Linear(8, 8, 0.3, false), ini.Linear(8, 8, 0.3, false)
b := &nn.Block{AttnNorm: &Norm{W: ini.Fill(1, 8)}, Attn: *att, FFNNorm: &Norm{W: ini.Fill(1, 8)}, FFN: newFFN(ini)}
x := ini.Normal(1, 3, 8)
b.Forward(x, nn.NewCache(1, 8, 8).Layer(0)).Data()`)

	ini := nn.NewInit(9)
	att := &nn.Attention{Heads: 2, KVHeads: 2, HeadDim: 4, RoPE: &nn.RoPE{Dim: 4, Base: 10000}}
	att.Q, att.K, att.V, att.O = ini.Linear(8, 8, 0.3, false), ini.Linear(8, 8, 0.3, false), ini.Linear(8, 8, 0.3, false), ini.Linear(8, 8, 0.3, false)
	n1, n2 := &nn.RMSNorm{W: ini.Fill(1, 8), Eps: 1e-5}, &nn.RMSNorm{W: ini.Fill(1, 8), Eps: 1e-5}
	up, down := ini.Linear(16, 8, 0.3, false), ini.Linear(8, 16, 0.3, false)
	b := &nn.Block{AttnNorm: n1, Attn: *att, FFNNorm: n2, FFN: cFFN{up, down}}
	want := b.Forward(ini.Normal(1, 3, 8), nn.NewCache(1, 8, 8).Layer(0)).Data()
	if !slices.Equal(got, want) {
		t.Errorf("interpreted layers %v\ncompiled %v", got, want)
	}
}

type cFFN struct{ Up, Down *nn.Linear }

func (f cFFN) Forward(x *tensor.Tensor) *tensor.Tensor {
	return f.Down.Forward(tensor.GELU(f.Up.Forward(x)))
}

// TestCrossBadFamily: an interpreted Load that fails or panics gives an
// error naming the family, from toy.Load called compiled or interpreted,
// and the interpreter goes on.
func TestCrossBadFamily(t *testing.T) {
	dir := t.TempDir()
	in, out := newBigram(t, "xbigram5")
	for _, c := range []struct{ arch, load, want string }{
		{"xbad1", `return nil, errors.New("no such weight")`, "xbad1: no such weight"},
		{"xbad2", `panic("boom")`, "xbad2: Load panicked: boom"},
		{"xbad3", `var m *Bigram; return m, nil`, "xbad3: Load returned no model"},
		{"xbad4", `var m *Bigram; m.Embed = nil; return m, nil`, "xbad4: Load panicked"},
	} {
		path := filepath.Join(dir, c.arch+".gguf")
		eval(t, in, fmt.Sprintf(`models.Register(models.Family{Arch: %q, Load: func(f *gguf.File) (models.Model, error) { %s }})
w := gguf.NewWriter()
w.SetString("general.architecture", %[1]q)
if err := w.WriteFile(%[3]q); err != nil { panic(err) }`, c.arch, c.load, path))
		_, err := toy.Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: compiled toy.Load: %v, want %q", c.arch, err, c.want)
		}
		msg := value[string](t, in, fmt.Sprintf(`_, err := toy.Load(%q); fmt.Sprint(err)`, path))
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: interpreted toy.Load: %v, want %q", c.arch, msg, c.want)
		}
	}
	if got := eval(t, in, `1 + 1`); got != "2" {
		t.Errorf("after: %q", got)
	}
	if strings.Contains(out.String(), "panic") {
		t.Errorf("output: %s", out.String())
	}
}

// TestParallelAssign: yaegi v0.16.1 drops the other values of a parallel
// assignment holding a call, composite literal or receive.
func TestParallelAssign(t *testing.T) {
	in, _ := newTest(t)
	eval(t, in, `type pq struct{ A int }
type ph struct{ P *pq; X, Y int }
func one() int { return 1 }`)
	for src, want := range map[string]string{
		`var x, y int; x, y = one(), 2; fmt.Sprint(x, y)`:                                         "1 2",
		`var x, y int; x, y = 2, one(); fmt.Sprint(x, y)`:                                         "2 1",
		`h := &ph{}; var x int; x, h.P = one(), &pq{}; fmt.Sprint(x, h.P != nil)`:                 "1 true",
		`a, b := one(), pq{A: 3}; fmt.Sprint(a, b)`:                                               "1 {3}",
		`var a, b = one(), pq{A: 3}; fmt.Sprint(a, b)`:                                            "1 {3}",
		`c := make(chan int, 1); c <- 5; a, b := <-c, 2; fmt.Sprint(a, b)`:                        "5 2",
		`var p ph; p.X, p.Y = one(), 3; fmt.Sprint(p.X, p.Y)`:                                     "1 3",
		`s := []int{0, 0}; s[0], s[1] = one(), 3; fmt.Sprint(s)`:                                  "[1 3]",
		`n := 0; for x, y := one(), 2; x < 3; x, y = x+1, one() { n += x*10 + y }; fmt.Sprint(n)`: "33",
	} {
		if got := eval(t, in, src); got != fmt.Sprintf("%q", want) {
			t.Errorf("%s = %s, want %q", src, got, want)
		}
	}
}

// TestRangeIntInDecl: ranges over integers inside declared functions, next
// to ranges over slices, maps and strings written the same way.
func TestRangeIntInDecl(t *testing.T) {
	in, out := newTest(t)
	eval(t, in, `type rc struct{ N int; S []string; M map[string]int; T string }
func count(c rc) (n int) {
	for range c.N { n += 1000 }
	for i := range c.S { n += 100 * (i + 1) }
	for range c.M { n += 10 }
	for range c.T { n++ }
	k := c.N
	for i := range k { n += i }
	return n
}
func main() { fmt.Println(count(rc{N: 3, S: []string{"a", "b"}, M: map[string]int{"x": 1}, T: "ab"})) }`)
	if got := out.String(); got != "3315\n" {
		t.Errorf("got %q, want 3315", got)
	}
}

// TestScriptArgs: Options.Args is the script's os.Args.
func TestScriptArgs(t *testing.T) {
	var out strings.Builder
	in, err := New(Options{Stdout: &out, Args: []string{"s.go", "a", "b c"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := value[[]string](t, in, `os.Args`); !reflect.DeepEqual(got, []string{"s.go", "a", "b c"}) {
		t.Errorf("os.Args = %q", got)
	}
}

// TestCrossConversions: a value held in an interpreted interface, converted
// to a compiled one or put in a compiled struct's interface field, and a
// parallel assignment to compiled interfaces; each then called from
// compiled code.
func TestCrossConversions(t *testing.T) {
	in, out := newTest(t)
	eval(t, in, `import "io"
type scale struct{ k float32 }
func (s *scale) Forward(x *tensor.Tensor) *tensor.Tensor { return tensor.Scale(x, s.k) }
type forwarder interface{ Forward(x *tensor.Tensor) *tensor.Tensor }
type seven struct{}
func (seven) Read(p []byte) (int, error) { return copy(p, "7"), io.EOF }
type reader interface{ Read(p []byte) (int, error) }
type pair struct{ A, B nn.Layer }`)
	for src, want := range map[string]string{
		`var f forwarder = &scale{2}; l := nn.Layer(f); l.Forward(tensor.FromFloat32([]float32{1}, 1, 1)).Data()[0]`:                       "2",
		`var f forwarder = &scale{3}; b := nn.Block{FFN: f}; b.FFN.Forward(tensor.FromFloat32([]float32{1}, 1, 1)).Data()[0]`:              "3",
		`var r reader = seven{}; b, _ := io.ReadAll(io.Reader(r)); string(b)`:                                                              `"7"`,
		`var p pair; p.A, p.B = &scale{4}, &scale{5}; p.A.Forward(p.B.Forward(tensor.FromFloat32([]float32{1}, 1, 1))).Data()[0]`:          "20",
		`var a, b nn.Layer; a, b = &scale{6}, nn.Layer(&scale{7}); a.Forward(b.Forward(tensor.FromFloat32([]float32{1}, 1, 1))).Data()[0]`: "42",
		`ls := []nn.Layer{&scale{2}, (&scale{4})}; ls[0].Forward(ls[1].Forward(tensor.FromFloat32([]float32{1}, 1, 1))).Data()[0]`:         "8",
	} {
		if got := eval(t, in, src); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
	if out.Len() > 0 {
		t.Errorf("output: %s", out)
	}
}
