package training

import (
	"strings"
	"testing"

	_ "github.com/toyml/toy/kernels/cpu" // the native backend, as toy train runs on
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/tensor"
)

// smolLM2 is SmolLM2-135M's shape.
var smolLM2 = llama.Config{Arch: "llama", VocabSize: 49152, ContextLength: 2048, Embed: 576, Layers: 30, FFN: 1536,
	Heads: 9, KVHeads: 3, HeadDim: 64, RopeDim: 64, RopeBase: 10000, NormEps: 1e-5, TiedOutput: true}

// BenchmarkTrainStepSmolLM2 times one full training step (forward, loss,
// backward, clipping, AdamW) at B = 4, T = 128 on a SmolLM2-135M-shaped
// model; tests/training/torch_bench.py times PyTorch on the same shape.
//
//	go test -run '^$' -bench TrainStepSmolLM2 -benchtime 2x ./tests/training
func BenchmarkTrainStepSmolLM2(b *testing.B) {
	benchStep(b, smolLM2, false)
}

// BenchmarkLoRAStepSmolLM2 is the same with rank-8 adapters on q and v
// over frozen F32 weights.
func BenchmarkLoRAStepSmolLM2(b *testing.B) {
	benchStep(b, smolLM2, true)
}

func benchStep(b *testing.B, c llama.Config, lora bool) {
	// The native CPU kernels, as toy train uses them (the gates in this
	// package run on pure Go); pure Go where they do not load.
	if be, err := tensor.OpenBackend("native"); err == nil {
		defer tensor.SetBackend(tensor.ActiveBackend())
		tensor.SetBackend(be)
	} else {
		b.Logf("pure Go: %v", err)
	}
	b.Logf("backend %s", tensor.ActiveBackend().Name())
	m := llama.NewRandom(c, 1)
	var params []optim.Param
	for _, w := range m.Weights() {
		params = append(params, optim.Param{Name: w.Name, T: w.T, Decay: len(w.T.Shape()) >= 2})
	}
	if lora {
		params = attachLoRA(m, 8)
	}
	var seqs [][]int32
	for s := 0; s < 4; s++ {
		seq := make([]int32, 129)
		for i := range seq {
			seq[i] = int32((i*7919 + s*104729) % c.VocabSize)
		}
		seqs = append(seqs, seq)
	}
	batch, err := engine.NewBatch(seqs, c.VocabSize, -1)
	if err != nil {
		b.Fatal(err)
	}
	opt := optim.NewAdamW()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := engine.TrainStep(m, params, opt, batch, 1e-4, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/step")
}

// attachLoRA freezes m and adds rank-r adapters to every Q and V
// projection, returning the adapters as the parameters to train.
func attachLoRA(m *llama.Model, r int) []optim.Param {
	for _, w := range m.Weights() {
		w.T.SetRequiresGrad(false)
	}
	in := nn.NewInit(2)
	var params []optim.Param
	for name, l := range nn.FindLinears(m, m.Weights()) {
		if !strings.HasSuffix(name, "attn_q") && !strings.HasSuffix(name, "attn_v") {
			continue
		}
		l.LoRA = &nn.LoRA{A: in.Normal(0.02, r, l.W.Dim(1)), B: in.Fill(0, l.W.Dim(0), r), Scale: 2}
		params = append(params, optim.Param{Name: name + ".lora_a", T: l.LoRA.A}, optim.Param{Name: name + ".lora_b", T: l.LoRA.B})
	}
	return params
}
