// Package recipes is toy's layer 5: training plans over the engine —
// FromScratch, WarmStart, LoRA and QLoRA, and NewFromModel for a model built
// in code — each a Recipe you feed batches:
//
//	r, err := recipes.NewFromScratch(cfg, recipes.NewOptions(256).WithLR(1e-3))
//	for step := 0; step < 1000; step++ {
//		loss, err := r.Step(batch)
//		…
//	}
//	err = r.SaveCheckpoint("runs/x/checkpoint.gguf")
//
// A step is engine.TrainStep over the recipe's trainable parameters with
// AdamW (package optim) at the learning rate of a linear warm-up then cosine
// schedule. LoRA and QLoRA freeze the base weights and train, on each
// target projection W [out, in], two matrices A [r, in] and B [out, r] whose
// product is added to it scaled by α/r:
//
//	y = x·Wᵀ + (α/r)·(x·Aᵀ)·Bᵀ
//
// Dimension legend (row-major, outermost first; as in package tensor):
//
//	B  sequences per step (Options.Batch)   T  positions per sequence (Options.Context)
//	V  vocabulary size                      r  LoRA rank (Options.Rank)
//	in, out  a projection's input and output width
//
// Checkpoints are GGUF files holding the weights (or the adapter), AdamW's
// moments, the step and the options; Resume continues bit-identically.
// SaveAdapter writes a LoRA adapter as llama.cpp reads it, SaveModel a
// model toy.Load (and llama.cpp) load, and MergeAdapter folds an adapter
// into its base.
//
// # Error Handling
//
// Loading a model or checkpoint returns errors wrapped with %w (the
// sentinels of package gguf, models.ErrUnknownArch; ErrCheckpoint for a file
// that is not a checkpoint toy can resume); a batch longer than the context
// returns engine.ErrBatch, and a step with a NaN or infinite loss or
// gradient engine.ErrNonFinite (the weights stay as they were).
package recipes
