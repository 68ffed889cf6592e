// Package testadapter trains the LoRA gate's adapters (kept apart from
// testmodel, which the recipes' own tests import).
package testadapter

import (
	"fmt"
	"slices"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/recipes"
)

// LoRASpec is a LoRA adapter trained on one of the gate models.
type LoRASpec struct {
	Name    string   `json:"name"`
	Base    string   `json:"base"`              // a Specs() name
	Targets []string `json:"targets,omitempty"` // the projections adapted; nil: q, k, v, o, gate, up, down
}

// File is the adapter's file name.
func (s LoRASpec) File() string { return s.Name + ".gguf" }

// LoRASpecs returns the gate adapters: every projection of llama, qwen2,
// gemma2, olmo2 and cohere2 (F32 bases), and Phi-3's fused ones (qkv, and
// ffn_up holding the gate and up projections).
func LoRASpecs() []LoRASpec {
	return []LoRASpec{{Name: "llama-f32-lora", Base: "llama-f32"}, {Name: "qwen2-f32-lora", Base: "qwen2-f32"},
		{Name: "gemma2-f32-lora", Base: "gemma2-f32"}, {Name: "olmo2-f32-lora", Base: "olmo2-f32"},
		{Name: "cohere2-f32-lora", Base: "cohere2-f32"},
		{Name: "phi3-f32-lora", Base: "phi3-f32", Targets: []string{"qkv", "o", "up", "down"}}}
}

// WriteLoRA trains the adapter of s for eight AdamW steps on a fixed batch
// over the base model file basePath, and writes it to path.
func WriteLoRA(s LoRASpec, basePath, path string, prompt []int32) error {
	targets := slices.Clone(s.Targets)
	if targets == nil {
		targets = []string{"q", "k", "v", "o", "gate", "up", "down"}
	}
	o := recipes.NewOptions(len(prompt) - 1).WithRank(4).WithAlpha(8).WithLR(5e-2).WithSteps(8).
		WithTargets(targets...).WithSeed(11)
	r, err := recipes.NewLoRA(basePath, o)
	if err != nil {
		return fmt.Errorf("lora %s: %w", s.Name, err)
	}
	b, err := engine.NewBatch([][]int32{prompt}, r.Model.VocabSize(), -1)
	if err != nil {
		return err
	}
	for i := 0; i < 8; i++ {
		if _, err := r.Step(b); err != nil {
			return fmt.Errorf("lora %s: %w", s.Name, err)
		}
	}
	return r.SaveAdapter(path)
}
