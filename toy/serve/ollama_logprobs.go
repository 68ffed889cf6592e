// ollama_logprobs.go: Ollama's log-probabilities (Ollama 0.12.11+):
// "logprobs": true and "top_logprobs": N (0 … 20) on /api/chat and
// /api/generate; each answer object lists the log-probs of the tokens
// whose text it carries, as api.Logprob {token, logprob, bytes,
// top_logprobs}.

package serve

// ollamaLogprobsRequest are the request fields, top-level as in Ollama.
type ollamaLogprobsRequest struct {
	Logprobs    bool `json:"logprobs"`
	TopLogprobs int  `json:"top_logprobs"`
}

// setLogprobs checks the fields and sets them on j.
func (r *ollamaLogprobsRequest) setLogprobs(j *job) *apiError {
	if r.TopLogprobs < 0 || r.TopLogprobs > maxTopLogprobs {
		return badRequest("top_logprobs", "top_logprobs must be between 0 and %d", maxTopLogprobs)
	}
	if r.TopLogprobs > 0 && !r.Logprobs {
		return badRequest("top_logprobs", "top_logprobs needs logprobs: true")
	}
	j.logprobs, j.topLogprobs = r.Logprobs, r.TopLogprobs
	return nil
}

// ollamaTokenLogprob is api.TokenLogprob.
type ollamaTokenLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes,omitempty"`
}

// ollamaLogprob is api.Logprob: a generated token and its alternatives.
type ollamaLogprob struct {
	ollamaTokenLogprob
	TopLogprobs []ollamaTokenLogprob `json:"top_logprobs,omitempty"`
}

// ollamaLogprobsOf renders log-probs in Ollama's shape; nil for none.
func ollamaLogprobsOf(lps []tokenLogprob) []ollamaLogprob {
	var out []ollamaLogprob
	for _, l := range lps {
		e := ollamaLogprob{ollamaTokenLogprob: ollamaTokenLogprob{Token: l.piece, Logprob: l.logprob, Bytes: byteList(l.piece)}}
		for _, a := range l.top {
			e.TopLogprobs = append(e.TopLogprobs, ollamaTokenLogprob{Token: a.piece, Logprob: a.logprob, Bytes: byteList(a.piece)})
		}
		out = append(out, e)
	}
	return out
}
