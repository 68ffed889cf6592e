// Package testadapter trains the LoRA gate's adapters (kept apart from
// testmodel, which the recipes' own tests import).
package testadapter

import (
	"fmt"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/recipes"
)

// LoRASpec is a LoRA adapter trained on one of the gate models.
type LoRASpec struct {
	Name string `json:"name"`
	Base string `json:"base"` // a Specs() name
}

// File is the adapter's file name.
func (s LoRASpec) File() string { return s.Name + ".gguf" }

// LoRASpecs returns the gate adapters: every projection of llama and qwen2
// (F32 bases).
func LoRASpecs() []LoRASpec {
	return []LoRASpec{{"llama-f32-lora", "llama-f32"}, {"qwen2-f32-lora", "qwen2-f32"}, {"gemma2-f32-lora", "gemma2-f32"}}
}

// WriteLoRA trains the adapter of s for eight AdamW steps on a fixed batch
// over the base model file basePath, and writes it to path.
func WriteLoRA(s LoRASpec, basePath, path string, prompt []int32) error {
	o := recipes.NewOptions(len(prompt)-1).WithRank(4).WithAlpha(8).WithLR(5e-2).WithSteps(8).
		WithTargets("q", "k", "v", "o", "gate", "up", "down").WithSeed(11)
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
