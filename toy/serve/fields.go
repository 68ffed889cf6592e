// fields.go: the fields real clients send beyond the ones toy's requests
// are built from — OpenAI's newer ones, llama-server's and vLLM's extras.
// Those that change the reply and toy implements are read into the job;
// those that change nothing here are accepted and ignored; those that would
// change the reply in a way toy cannot are refused unless they are off, with
// a 400 naming the field. A field no client is known to send stays a 400,
// with a suggestion when it is a misspelling of a known one (decodeFrom).

package serve

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// clientFields are the fields both completion endpoints accept beside
// samplingRequest's own.
type clientFields struct {
	// Implemented.
	NPredict               *int     `json:"n_predict"`                  // llama-server's max_tokens; −1, −2: no limit
	IgnoreEOS              bool     `json:"ignore_eos"`                 // the end-of-generation tokens are never drawn: the reply runs to max_tokens (or a stop string)
	MinTokens              *int     `json:"min_tokens"`                 // vLLM's: no end of generation nor stop string before this many tokens
	RepetitionPenalty      *float32 `json:"repetition_penalty"`         // vLLM's: repeat_penalty over every token of the prompt and the reply
	IncludeStopStrInOutput bool     `json:"include_stop_str_in_output"` // vLLM's: the stop string found ends the reply's text
	TMaxPredictMS          *int     `json:"t_max_predict_ms"`           // llama-server's: a reply that has run this long since its first token ends at its next token once it holds a newline

	// Accepted and ignored: they change nothing toy sends back.
	Store                      *bool           `json:"store"`
	Metadata                   json.RawMessage `json:"metadata"`
	ServiceTier                *string         `json:"service_tier"`
	SafetyIdentifier           *string         `json:"safety_identifier"`
	PromptCacheKey             *string         `json:"prompt_cache_key"`
	IDSlot                     *int            `json:"id_slot"`       // the pool picks the slot with the longest shared prefix
	NKeep                      *int            `json:"n_keep"`        // toy never shifts the context
	ReturnTokens               *bool           `json:"return_tokens"` // not sent
	TimingsPerToken            *bool           `json:"timings_per_token"`
	ReturnProgress             *bool           `json:"return_progress"`
	TMaxPromptMS               *int            `json:"t_max_prompt_ms"`
	PenalizeNL                 *bool           `json:"penalize_nl"` // removed from llama.cpp
	SpacesBetweenSpecialTokens *bool           `json:"spaces_between_special_tokens"`
	Priority                   *int            `json:"priority"`
	RequestID                  *string         `json:"request_id"`
	ResponseFields             json.RawMessage `json:"response_fields"`
	LengthPenalty              *float32        `json:"length_penalty"` // beam search's only

	// Accepted only when off (or at their default): toy has no such sampler
	// or option. The parameters of a sampler that is off are ignored.
	Samplers            json.RawMessage `json:"samplers"`
	DynatempRange       *float32        `json:"dynatemp_range"`
	DynatempExponent    *float32        `json:"dynatemp_exponent"`
	TypicalP            *float32        `json:"typical_p"`
	TFSZ                *float32        `json:"tfs_z"`
	Mirostat            *int            `json:"mirostat"`
	MirostatTau         *float32        `json:"mirostat_tau"`
	MirostatEta         *float32        `json:"mirostat_eta"`
	TopNSigma           *float32        `json:"top_n_sigma"`
	XTCProbability      *float32        `json:"xtc_probability"`
	XTCThreshold        *float32        `json:"xtc_threshold"`
	DRYMultiplier       *float32        `json:"dry_multiplier"`
	DRYBase             *float32        `json:"dry_base"`
	DRYAllowedLength    *int            `json:"dry_allowed_length"`
	DRYPenaltyLastN     *int            `json:"dry_penalty_last_n"`
	DRYSequenceBreakers json.RawMessage `json:"dry_sequence_breakers"`
	MinKeep             *int            `json:"min_keep"`
	NProbs              *int            `json:"n_probs"`
	PostSamplingProbs   *bool           `json:"post_sampling_probs"`
	Lora                json.RawMessage `json:"lora"`
	SkipSpecialTokens   *bool           `json:"skip_special_tokens"`
	BestOf              *int            `json:"best_of"`
	UseBeamSearch       *bool           `json:"use_beam_search"`
	StopTokenIDs        []int32         `json:"stop_token_ids"`
	BadWords            []string        `json:"bad_words"`
	AllowedTokenIDs     []int32         `json:"allowed_token_ids"`
	TruncatePromptToks  *int            `json:"truncate_prompt_tokens"`
	PromptLogprobs      *int            `json:"prompt_logprobs"`
}

// chatFields are OpenAI's chat-only fields toy takes beside chatRequest's.
type chatFields struct {
	Modalities       []string        `json:"modalities"` // only ["text"]
	Audio            json.RawMessage `json:"audio"`      // only null
	Prediction       json.RawMessage `json:"prediction"` // predicted output: a speed-up, ignored
	WebSearchOptions json.RawMessage `json:"web_search_options"`
	Verbosity        *string         `json:"verbosity"` // a hint for OpenAI's models: "low", "medium", "high"
	Functions        json.RawMessage `json:"functions"`
	FunctionCall     json.RawMessage `json:"function_call"`
}

// check refuses what would change the reply in a way toy cannot.
func (f *clientFields) check(n int) *apiError {
	off := func(v *float32, offs ...float32) bool {
		if v == nil {
			return true
		}
		for _, o := range offs {
			if *v == o {
				return true
			}
		}
		return false
	}
	no := func(field, why string) *apiError { return badRequest(field, "%s is not supported: %s", field, why) }
	switch {
	case f.NPredict != nil && *f.NPredict < -2:
		return badRequest("n_predict", "n_predict must be ≥ 0, or -1 or -2 for no limit")
	case f.MinTokens != nil && *f.MinTokens < 0:
		return badRequest("min_tokens", "min_tokens must be ≥ 0")
	case f.RepetitionPenalty != nil && *f.RepetitionPenalty <= 0:
		return badRequest("repetition_penalty", "repetition_penalty must be > 0 (1: off)")
	case f.Samplers != nil && string(f.Samplers) != "null":
		return no("samplers", "toy's samplers run in one fixed order (logit bias, penalties, top_k, top_p, min_p, temperature)")
	case !off(f.DynatempRange, 0):
		return no("dynatemp_range", "toy has no dynamic temperature (only 0, off)")
	case f.TypicalP != nil && *f.TypicalP < 1:
		return no("typical_p", "toy has no locally typical sampling (only 1, off)")
	case f.TFSZ != nil && *f.TFSZ != 0 && *f.TFSZ < 1:
		return no("tfs_z", "toy has no tail-free sampling (only 1, off)")
	case f.Mirostat != nil && *f.Mirostat != 0:
		return no("mirostat", "toy has no Mirostat sampler (only 0, off)")
	case f.TopNSigma != nil && *f.TopNSigma > 0:
		return no("top_n_sigma", "toy has no top-nσ sampler (only -1 or 0, off)")
	case !off(f.XTCProbability, 0) && !(f.XTCThreshold != nil && *f.XTCThreshold > 0.5):
		return no("xtc_probability", "toy has no XTC sampler (only 0, off)")
	case !off(f.DRYMultiplier, 0):
		return no("dry_multiplier", "toy has no DRY sampler (only 0, off)")
	case f.MinKeep != nil && *f.MinKeep > 1:
		return no("min_keep", "toy's truncating samplers keep at least one token (only 0 or 1)")
	case f.NProbs != nil && *f.NProbs != 0:
		return no("n_probs", "llama-server's completion_probabilities are not sent: ask for logprobs (and top_logprobs)")
	case f.PostSamplingProbs != nil && *f.PostSamplingProbs:
		return no("post_sampling_probs", "log-probs are the model's, before sampling")
	case f.Lora != nil && string(f.Lora) != "null" && string(f.Lora) != "[]":
		return no("lora", "toy serves one model without adapters")
	case f.SkipSpecialTokens != nil && !*f.SkipSpecialTokens:
		return no("skip_special_tokens", "special tokens are never written into the text (only true)")
	case f.BestOf != nil && *f.BestOf != n:
		return no("best_of", "toy does not rank candidates: best_of may only equal n")
	case f.UseBeamSearch != nil && *f.UseBeamSearch:
		return no("use_beam_search", "toy samples, it has no beam search")
	case len(f.StopTokenIDs) > 0:
		return no("stop_token_ids", "send stop strings")
	case len(f.BadWords) > 0:
		return no("bad_words", "ban tokens with logit_bias -100")
	case len(f.AllowedTokenIDs) > 0:
		return no("allowed_token_ids", "keep the reply to a grammar or a json_schema")
	case f.TruncatePromptToks != nil:
		return no("truncate_prompt_tokens", "toy does not cut prompts: shorten the prompt")
	case f.PromptLogprobs != nil:
		return no("prompt_logprobs", "toy reports the reply's log-probs only")
	}
	return nil
}

// check refuses the chat fields toy cannot honour.
func (f *chatFields) check() *apiError {
	set := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	for _, m := range f.Modalities {
		if m != "text" {
			return badRequest("modalities", "modality %q is not supported: toy's models write text (only [\"text\"])", m)
		}
	}
	switch {
	case set(f.Audio):
		return badRequest("audio", "audio output is not supported: toy's models write text")
	case set(f.WebSearchOptions):
		return badRequest("web_search_options", "web_search_options is not supported: toy does not search the web")
	case f.Verbosity != nil && *f.Verbosity != "low" && *f.Verbosity != "medium" && *f.Verbosity != "high":
		return badRequest("verbosity", `verbosity must be "low", "medium" or "high"`)
	case set(f.Functions), set(f.FunctionCall):
		return badRequest("functions", "functions and function_call are OpenAI's old form: send tools and tool_choice")
	}
	return nil
}

// suggest names the known JSON field of v closest to name, when one is
// within an edit distance of 2 ignoring case: a misspelling's correction.
func suggest(v any, name string) string {
	best, bestD := "", 3
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if tag != "-" && tag != "" && !sf.Anonymous {
				if d := editDistance(strings.ToLower(tag), strings.ToLower(name)); d < bestD || d == bestD && tag < best {
					best, bestD = tag, d
				}
			}
			if sf.IsExported() || sf.Anonymous {
				walk(sf.Type)
			}
		}
	}
	walk(reflect.TypeOf(v))
	if best == name {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	if utf8.RuneCountInString(a) > 64 || utf8.RuneCountInString(b) > 64 {
		return 99 // no field name is that long
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// apply sets what the implemented fields ask of the job.
func (f *clientFields) apply(j *job) {
	j.ignoreEOS = f.IgnoreEOS
	if f.MinTokens != nil {
		j.minTokens = *f.MinTokens
	}
	j.includeStop = f.IncludeStopStrInOutput
	if f.TMaxPredictMS != nil && *f.TMaxPredictMS > 0 {
		j.maxPredict = time.Duration(*f.TMaxPredictMS) * time.Millisecond
	}
}
