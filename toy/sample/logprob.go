// Log-probabilities of tokens under a model's logits.

package sample

import "math"

// LogSoftmax returns log softmax(x) in float64:
//
//	log p_i = x_i − m − log Σ_j exp(x_j − m),  m = max_j x_j
//
// (subtracting m keeps every exponent ≤ 0).
func LogSoftmax(x []float32) []float64 {
	lse := logSumExp(x)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v) - lse
	}
	return out
}

// LogProb returns log softmax(logits)[id]: the log-probability the model
// gives token id, at temperature 1 and before any penalty or filter.
func LogProb(logits []float32, id int32) float64 {
	return float64(logits[id]) - logSumExp(logits)
}

func logSumExp(x []float32) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - m)
	}
	return m + math.Log(sum)
}
