package cudatest

import "github.com/toyml/toy/internal/testmodel"

// gptossOnce returns the uploads a gpt-oss gate model makes once, at its
// first decode step, beyond the token id each step sends up: per layer, the
// column of ones [1, 1] with which nn.MoE gathers the chosen experts'
// biases (tensor.MatMulID over the bias stack seen as [E, n, 1]). The
// prompt (more than nn's routed-token bound) took the grouped experts, which
// need no such column; from the first decode step on it stays on the
// device, as do the attention sinks and the clamped SwiGLU's operands, so
// every later step moves one id up and the logits down.
func gptossOnce(s testmodel.Spec) int64 { return int64(s.Layers) }
