// Package engine is toy's layer 4: what runs a model (layer 3) on the active
// backend. For inference, a Session runs a model over a growing KV cache
// (prefill the prompt once, then decode one token at a time), Generate is
// the sampling loop on top of it, and a Speculator decodes with a draft
// model's guesses checked in one batched pass (speculate.go). For training,
// TrainStep runs one step over a Batch: forward, cross-entropy loss,
// backward on the tape, gradient clipping and an AdamW update (train.go).
//
// Dimension legend (row-major, outermost first; as in package tensor):
//
//	B  sequences in a training batch   T  tokens in this call (a prompt, a training sequence)
//	S  positions held in the KV cache  D  model width
//	V  vocabulary size                 k  a draft's guesses per pass
//
// A Model maps ids [T] to hidden states [T, D] (Hidden, appending to the
// cache) and those to logits [T, V] (Logits); Session.Next returns the
// logits [V] after its input, Session.All those after every token, [T, V].
// A Batch holds B sequences of T inputs and T targets; Loss is a scalar [1].
//
// # Error Handling
//
// Token ids outside the vocabulary return ErrTokenRange, a cache with no
// room ErrContextFull, a malformed batch ErrBatch, and NaN or infinite
// logits or losses ErrNonFinite (a step with one is skipped). A shape error
// inside the model panics, as in package tensor. Generate stops at its next
// token, with Reason "canceled", when its ctx is done or the interrupt
// context an interactive front end set (SetInterrupt) is.
package engine
