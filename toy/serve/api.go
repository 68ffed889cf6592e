// api.go: the OpenAI request and response bodies, and their checks.

package serve

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/sample"
)

// Limits on what a request may ask for.
const (
	maxChoices     = 16 // n
	maxTopLogprobs = 20 // top_logprobs, and logprobs of /v1/completions
	maxStops       = 16
)

// samplingRequest holds the fields both completion endpoints accept.
type samplingRequest struct {
	Model               string             `json:"model"`                 // any name is accepted; responses carry the server's
	MaxTokens           *int               `json:"max_tokens"`            // default: until the context is full
	MaxCompletionTokens *int               `json:"max_completion_tokens"` // OpenAI's newer name for max_tokens
	Temperature         *float32           `json:"temperature"`           // default 0.8; 0 is greedy
	TopP                *float32           `json:"top_p"`                 // default 0.95
	TopK                *int               `json:"top_k"`                 // default 40 (llama.cpp's extension)
	MinP                *float32           `json:"min_p"`                 // default 0.05 (llama.cpp's extension)
	RepeatPenalty       *float32           `json:"repeat_penalty"`        // default 1: off (llama.cpp's extension)
	RepeatLastN         *int               `json:"repeat_last_n"`         // default 64
	FrequencyPenalty    *float32           `json:"frequency_penalty"`     // −2 … 2, default 0
	PresencePenalty     *float32           `json:"presence_penalty"`      // −2 … 2, default 0
	LogitBias           map[string]float32 `json:"logit_bias"`            // token id → −100 … 100
	Seed                *uint64            `json:"seed"`                  // default: a new one per request
	Stop                json.RawMessage    `json:"stop"`                  // a string or up to 16 strings
	Stream              bool               `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage       bool  `json:"include_usage"`
		IncludeObfuscation *bool `json:"include_obfuscation"` // ignored: toy sends no obfuscation padding
	} `json:"stream_options"`
	N           *int  `json:"n"`            // 1 … 16 choices, default 1
	User        any   `json:"user"`         // ignored
	CachePrompt *bool `json:"cache_prompt"` // llama.cpp's; the prompt cache is always on
	// Grammar keeps the reply in a GBNF grammar (llama.cpp's extension;
	// grammar.ParseGBNF).
	Grammar string `json:"grammar"`
	// JSONSchema keeps the reply a value of a JSON schema (llama.cpp's
	// extension; grammar.CompileSchema), as response_format json_schema.
	JSONSchema json.RawMessage `json:"json_schema"`
	// clientFields are llama-server's, vLLM's and OpenAI's other fields
	// (fields.go).
	clientFields
}

// responseFormat is chat's response_format: {"type": "text"},
// {"type": "json_object"} (with llama-server's optional "schema") or
// {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}.
type responseFormat struct {
	Type       string          `json:"type"`
	Schema     json.RawMessage `json:"schema"`
	JSONSchema *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	} `json:"json_schema"`
}

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	samplingRequest
	Messages            []chatMessage   `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`   // false: at most one call
	ResponseFormat      *responseFormat `json:"response_format"`       // text, json_object or json_schema
	ChatTemplateKwargs  map[string]any  `json:"chat_template_kwargs"`  // more template variables (enable_thinking …)
	ReasoningFormat     string          `json:"reasoning_format"`      // llama.cpp's: "none" leaves <think> in the content; "auto" (default), "deepseek": reasoning_content
	ReasoningEffort     string          `json:"reasoning_effort"`      // "low", "medium", "high": the template's reasoning_effort (gpt-oss)
	Logprobs            *bool           `json:"logprobs"`              // log-probs of the reply's tokens
	TopLogprobs         *int            `json:"top_logprobs"`          // 0 … 20 most likely tokens at each position
	AddGenerationPrompt *bool           `json:"add_generation_prompt"` // default true
	chatFields                          // OpenAI's other chat fields (fields.go)
}

// check is samplingRequest's check and chatFields'.
func (r *chatRequest) check() *apiError {
	if e := r.samplingRequest.check(); e != nil {
		return e
	}
	return r.chatFields.check()
}

// chatMessage is one message; content is a string or a list of text parts.
type chatMessage struct {
	Role         string           `json:"role"`
	Content      json.RawMessage  `json:"content"`
	Name         string           `json:"name"`
	ToolCalls    []wireToolCall   `json:"tool_calls"`        // an assistant's calls
	ToolCallID   string           `json:"tool_call_id"`      // the call a "tool" message answers
	Reasoning    string           `json:"reasoning_content"` // an assistant's earlier thinking (llama.cpp's), for the template
	Refusal      *string          `json:"refusal"`           // what clients echo back of an earlier reply:
	Audio        *json.RawMessage `json:"audio"`             // accepted when empty
	Annotations  json.RawMessage  `json:"annotations"`
	FunctionCall json.RawMessage  `json:"function_call"`
}

// wireToolCall is a tool call as OpenAI's JSON has it: arguments are a
// string holding a JSON object.
type wireToolCall struct {
	Index    *int   `json:"index,omitempty"` // in streamed deltas
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// completionRequest is the body of POST /v1/completions.
type completionRequest struct {
	samplingRequest
	Prompt   json.RawMessage `json:"prompt"`   // a string, or one token-id list
	Logprobs json.RawMessage `json:"logprobs"` // 0 … 20: log-probs, and that many alternatives per token
	Echo     bool            `json:"echo"`     // only false
	Suffix   string          `json:"suffix"`   // fill in the middle (fim.go)
}

// apiError is an error in OpenAI's shape, with the HTTP status to send.
// Ollama's endpoints send only its message, as {"error": "…"}.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    any    `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

func badRequest(param, format string, args ...any) *apiError {
	e := &apiError{Status: 400, Message: fmt.Sprintf(format, args...), Type: "invalid_request_error"}
	if param != "" {
		e.Param = param
	}
	return e
}

// check rejects what toy cannot honour instead of silently ignoring it.
func (r *samplingRequest) check() *apiError {
	between := func(v *float32, lo, hi float32) bool { return v == nil || (*v >= lo && *v <= hi) }
	switch {
	case r.N != nil && (*r.N < 1 || *r.N > maxChoices):
		return badRequest("n", "n must be between 1 and %d", maxChoices)
	case !between(r.FrequencyPenalty, -2, 2):
		return badRequest("frequency_penalty", "frequency_penalty must be between -2 and 2")
	case !between(r.PresencePenalty, -2, 2):
		return badRequest("presence_penalty", "presence_penalty must be between -2 and 2")
	case r.MaxTokens != nil && *r.MaxTokens < 0, r.MaxCompletionTokens != nil && *r.MaxCompletionTokens < 0:
		return badRequest("max_tokens", "max_tokens must be ≥ 0")
	case !between(r.Temperature, 0, 100):
		return badRequest("temperature", "temperature must be between 0 and 100")
	case !between(r.TopP, 0, 1):
		return badRequest("top_p", "top_p must be between 0 and 1")
	case !between(r.MinP, 0, 1):
		return badRequest("min_p", "min_p must be between 0 and 1")
	case r.TopK != nil && *r.TopK < 0:
		return badRequest("top_k", "top_k must be ≥ 0")
	case r.RepeatPenalty != nil && *r.RepeatPenalty < 0:
		return badRequest("repeat_penalty", "repeat_penalty must be ≥ 0")
	case r.RepeatPenalty != nil && r.RepetitionPenalty != nil:
		return badRequest("repetition_penalty", "repetition_penalty (vLLM's, over the whole prompt and reply) and repeat_penalty (llama.cpp's, over the last repeat_last_n tokens): give one")
	}
	return r.clientFields.check(r.choices())
}

// stops decodes "stop": absent, a string, or a list of strings.
func (r *samplingRequest) stops() ([]string, *apiError) {
	if len(r.Stop) == 0 || string(r.Stop) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(r.Stop, &one) == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(r.Stop, &many); err != nil || len(many) > maxStops {
		return nil, badRequest("stop", "stop must be a string or a list of at most %d strings", maxStops)
	}
	out := many[:0]
	for _, s := range many {
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// params maps the request's sampling fields onto sample.Params, with
// llama-server's defaults for what it leaves out. vocab bounds logit_bias.
func (r *samplingRequest) params(vocab int) (sample.Params, *apiError) {
	p := defaultParams()
	set := func(dst *float32, v *float32) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.Temperature, r.Temperature)
	set(&p.TopP, r.TopP)
	set(&p.MinP, r.MinP)
	set(&p.RepeatPenalty, r.RepeatPenalty)
	set(&p.FrequencyPenalty, r.FrequencyPenalty)
	set(&p.PresencePenalty, r.PresencePenalty)
	if r.TopK != nil {
		p.TopK = *r.TopK
	}
	if r.RepeatLastN != nil {
		p.RepeatLastN = *r.RepeatLastN
	}
	if r.RepetitionPenalty != nil { // vLLM's: every token of the prompt and the reply
		p.RepeatPenalty, p.RepeatLastN = *r.RepetitionPenalty, -1
	}
	if r.Seed != nil {
		p.Seed = *r.Seed
	}
	if len(r.LogitBias) > 0 {
		p.LogitBias = map[int32]float32{}
		for k, b := range r.LogitBias {
			id, err := strconv.Atoi(k)
			if err != nil || id < 0 || id >= vocab {
				return p, badRequest("logit_bias", "logit_bias key %q is not a token id (0 … %d)", k, vocab-1)
			}
			if b < -100 || b > 100 {
				return p, badRequest("logit_bias", "logit_bias of token %d is %v: it must be between -100 and 100", id, b)
			}
			p.LogitBias[int32(id)] = b
		}
	}
	return p, nil
}

// defaultParams are llama-server's sampling defaults, with a new seed.
func defaultParams() sample.Params {
	return sample.Params{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1, Seed: randomSeed()}
}

// choices is n, 1 when absent.
func (r *samplingRequest) choices() int {
	if r.N == nil {
		return 1
	}
	return *r.N
}

// maxTokens is max_tokens (or max_completion_tokens, or llama-server's
// n_predict, the least of those set); -1 when none is (or n_predict is -1
// or -2, no limit).
func (r *samplingRequest) maxTokens() int {
	n := -1
	for _, m := range []*int{r.MaxTokens, r.MaxCompletionTokens, r.NPredict} {
		if m != nil && *m >= 0 && (n < 0 || *m < n) {
			n = *m
		}
	}
	return n
}

// logprobs reads chat's logprobs and top_logprobs.
func (r *chatRequest) logprobs() (bool, int, *apiError) {
	on := r.Logprobs != nil && *r.Logprobs
	top := 0
	if r.TopLogprobs != nil {
		top = *r.TopLogprobs
	}
	switch {
	case top < 0 || top > maxTopLogprobs:
		return false, 0, badRequest("top_logprobs", "top_logprobs must be between 0 and %d", maxTopLogprobs)
	case top > 0 && !on:
		return false, 0, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
	}
	return on, top, nil
}

// logprobs reads /v1/completions' logprobs: null or false (off), true, or
// the number of alternatives to list per token.
func (r *completionRequest) logprobs() (bool, int, *apiError) {
	switch string(r.Logprobs) {
	case "", "null", "false":
		return false, 0, nil
	case "true":
		return true, 0, nil
	}
	var n int
	if json.Unmarshal(r.Logprobs, &n) != nil || n < 0 || n > maxTopLogprobs {
		return false, 0, badRequest("logprobs", "logprobs must be an integer between 0 and %d", maxTopLogprobs)
	}
	return true, n, nil
}

// messages converts the request's messages for the chat template.
func (r *chatRequest) messages() ([]chat.Message, *apiError) {
	if len(r.Messages) == 0 {
		return nil, badRequest("messages", "messages must hold at least one message")
	}
	out := make([]chat.Message, len(r.Messages))
	for i, m := range r.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		role := m.Role
		switch role {
		case "system", "user", "assistant", "tool":
		case "developer": // OpenAI's newer name for system
			role = "system"
		default:
			return nil, badRequest(param+".role", "unknown role %q: want system, user, assistant or tool", m.Role)
		}
		text, err := contentText(m.Content, "text")
		if err != nil {
			return nil, badRequest(param+".content", "%v", err)
		}
		if m.Audio != nil {
			return nil, badRequest(param+".audio", "audio is not supported: toy's models read text")
		}
		if len(m.FunctionCall) > 0 && string(m.FunctionCall) != "null" {
			return nil, badRequest(param+".function_call", "function_call is OpenAI's old form: send tool_calls")
		}
		msg := chat.Message{Role: role, Content: text, Name: m.Name, ReasoningContent: m.Reasoning}
		if len(m.ToolCalls) > 0 && role != "assistant" {
			return nil, badRequest(param+".tool_calls", "only assistant messages carry tool_calls")
		}
		for k, c := range m.ToolCalls {
			call, e := c.message(fmt.Sprintf("%s.tool_calls[%d]", param, k))
			if e != nil {
				return nil, e
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		}
		if role == "tool" {
			msg.ToolCallID = m.ToolCallID
		}
		out[i] = msg
	}
	return out, nil
}

// message converts a call for the template: its arguments string decoded
// into the object the templates expect.
func (c *wireToolCall) message(param string) (chat.ToolCall, *apiError) {
	if c.Function.Name == "" {
		return chat.ToolCall{}, badRequest(param+".function.name", "a tool call needs function.name")
	}
	args := c.Function.Arguments
	var s string
	if json.Unmarshal(args, &s) == nil { // OpenAI's form: a string holding JSON
		args = json.RawMessage(s)
		if !json.Valid(args) {
			b, _ := json.Marshal(s) // not JSON: the template gets the string
			args = b
		}
	} else if len(args) > 0 && !json.Valid(args) {
		return chat.ToolCall{}, badRequest(param+".function.arguments", "function.arguments must be a JSON string")
	}
	typ := c.Type
	if typ == "" {
		typ = "function"
	}
	return chat.ToolCall{ID: c.ID, Type: typ, Function: chat.FunctionCall{Name: c.Function.Name, Arguments: args}}, nil
}

// contentText reads a message's content: a string, null, or a list of
// parts of the given types (chat's "text"; the Responses API's
// "input_text" and "output_text" too), their texts joined with newlines.
func contentText(raw json.RawMessage, types ...string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content must be a string or a list of %s parts", types[0])
	}
	var texts []string
	for _, p := range parts {
		if !slices.Contains(types, p.Type) {
			return "", fmt.Errorf("content part of type %q is not supported: toy's models read text", p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// Responses.
type (
	usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"` // over all choices
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"` // prompt tokens whose keys and values were kept from the previous request
		} `json:"prompt_tokens_details"`
	}
	responseMessage struct {
		Role             string         `json:"role"`
		Content          *string        `json:"content"`                     // null when the reply is tool calls only
		ReasoningContent string         `json:"reasoning_content,omitempty"` // llama.cpp's: the reply's <think> part
		ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	}
	chatChoice struct {
		Index        int              `json:"index"`
		Message      *responseMessage `json:"message,omitempty"`
		Delta        *responseDelta   `json:"delta,omitempty"`
		Logprobs     *chatLogprobs    `json:"logprobs"`
		FinishReason *string          `json:"finish_reason"`
	}
	responseDelta struct {
		Role             string         `json:"role,omitempty"`
		Content          *string        `json:"content,omitempty"`
		ReasoningContent *string        `json:"reasoning_content,omitempty"`
		ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	}
	// chatLogprobs is chat's logprobs: one entry per reply token.
	chatLogprobs struct {
		Content []chatTokenLogprob `json:"content"`
	}
	chatTokenLogprob struct {
		Token       string           `json:"token"`
		Logprob     float64          `json:"logprob"`
		Bytes       []int            `json:"bytes"` // the token's UTF-8 bytes (a token may hold part of a character)
		TopLogprobs []chatTopLogprob `json:"top_logprobs"`
	}
	chatTopLogprob struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
		Bytes   []int   `json:"bytes"`
	}
	textChoice struct {
		Index        int           `json:"index"`
		Text         string        `json:"text"`
		Logprobs     *textLogprobs `json:"logprobs"`
		FinishReason *string       `json:"finish_reason"`
	}
	// textLogprobs is /v1/completions' legacy logprobs; text_offset counts
	// bytes from the start of the reply.
	textLogprobs struct {
		Tokens        []string             `json:"tokens"`
		TokenLogprobs []float64            `json:"token_logprobs"`
		TopLogprobs   []map[string]float64 `json:"top_logprobs"`
		TextOffset    []int                `json:"text_offset"`
	}
	// response is a chat.completion, chat.completion.chunk or text_completion.
	response struct {
		ID                string `json:"id"`
		Object            string `json:"object"`
		Created           int64  `json:"created"`
		Model             string `json:"model"`
		SystemFingerprint string `json:"system_fingerprint"`
		Choices           any    `json:"choices"` // []chatChoice or []textChoice
		Usage             *usage `json:"usage,omitempty"`
	}
)

func byteList(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// chatLogprobsOf renders log-probs in chat's shape; nil for none.
func chatLogprobsOf(lps []tokenLogprob) *chatLogprobs {
	out := &chatLogprobs{Content: []chatTokenLogprob{}}
	for _, l := range lps {
		e := chatTokenLogprob{Token: l.piece, Logprob: l.logprob, Bytes: byteList(l.piece), TopLogprobs: []chatTopLogprob{}}
		for _, a := range l.top {
			e.TopLogprobs = append(e.TopLogprobs, chatTopLogprob{Token: a.piece, Logprob: a.logprob, Bytes: byteList(a.piece)})
		}
		out.Content = append(out.Content, e)
	}
	return out
}

// textLogprobsOf renders log-probs in /v1/completions' legacy shape.
func textLogprobsOf(lps []tokenLogprob) *textLogprobs {
	out := &textLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	for _, l := range lps {
		out.Tokens = append(out.Tokens, l.piece)
		out.TokenLogprobs = append(out.TokenLogprobs, l.logprob)
		top := map[string]float64{}
		for _, a := range l.top {
			if _, dup := top[a.piece]; !dup { // two ids may share a text; keep the likelier
				top[a.piece] = a.logprob
			}
		}
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, l.offset)
	}
	return out
}

// wireCalls renders parsed calls in OpenAI's shape; stream adds the index.
func wireCalls(calls []toolCall, stream bool) []wireToolCall {
	out := make([]wireToolCall, len(calls))
	for i, c := range calls {
		w := wireToolCall{ID: c.ID, Type: "function"}
		if stream {
			w.Index = &i
		}
		w.Function.Name = c.Name
		w.Function.Arguments, _ = json.Marshal(c.Arguments)
		out[i] = w
	}
	return out
}
