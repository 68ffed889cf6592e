// api.go: the OpenAI request and response bodies, and their checks.

package serve

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toyml/toy/toy/chat"
)

// samplingRequest holds the fields both completion endpoints accept.
type samplingRequest struct {
	Model               string          `json:"model"`                 // any name is accepted; responses carry the server's
	MaxTokens           *int            `json:"max_tokens"`            // default: until the context is full
	MaxCompletionTokens *int            `json:"max_completion_tokens"` // OpenAI's newer name for max_tokens
	Temperature         *float32        `json:"temperature"`           // default 0.8; 0 is greedy
	TopP                *float32        `json:"top_p"`                 // default 0.95
	TopK                *int            `json:"top_k"`                 // default 40 (llama.cpp's extension)
	MinP                *float32        `json:"min_p"`                 // default 0.05 (llama.cpp's extension)
	RepeatPenalty       *float32        `json:"repeat_penalty"`        // default 1: off (llama.cpp's extension)
	RepeatLastN         *int            `json:"repeat_last_n"`         // default 64
	FrequencyPenalty    float32         `json:"frequency_penalty"`     // only 0: toy's sampler has repeat_penalty instead
	PresencePenalty     float32         `json:"presence_penalty"`      // only 0
	Seed                *uint64         `json:"seed"`                  // default: a new one per request
	Stop                json.RawMessage `json:"stop"`                  // a string or up to 16 strings
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N           *int            `json:"n"`            // only 1
	User        string          `json:"user"`         // ignored
	Logprobs    json.RawMessage `json:"logprobs"`     // only false or null
	LogitBias   map[string]any  `json:"logit_bias"`   // only empty
	CachePrompt *bool           `json:"cache_prompt"` // llama.cpp's; the prompt cache is always on
}

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	samplingRequest
	Messages            []chatMessage          `json:"messages"`
	Tools               json.RawMessage        `json:"tools"`                 // not supported
	ToolChoice          json.RawMessage        `json:"tool_choice"`           // only "none" or absent
	ResponseFormat      *struct{ Type string } `json:"response_format"`       // only {"type": "text"}
	ChatTemplateKwargs  map[string]any         `json:"chat_template_kwargs"`  // more template variables (enable_thinking …)
	ParallelToolCalls   *bool                  `json:"parallel_tool_calls"`   // ignored without tools
	TopLogprobs         *int                   `json:"top_logprobs"`          // only with logprobs: not supported
	AddGenerationPrompt *bool                  `json:"add_generation_prompt"` // default true
}

// chatMessage is one message; content is a string or a list of text parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Name    string          `json:"name"`
}

// completionRequest is the body of POST /v1/completions.
type completionRequest struct {
	samplingRequest
	Prompt json.RawMessage `json:"prompt"` // a string, or one token-id list
	Echo   bool            `json:"echo"`   // only false
	Suffix string          `json:"suffix"` // only ""
}

// apiError is an error in OpenAI's shape, with the HTTP status to send.
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
	switch {
	case r.N != nil && *r.N != 1:
		return badRequest("n", "n must be 1: toy generates one choice per request")
	case r.FrequencyPenalty != 0:
		return badRequest("frequency_penalty", "frequency_penalty is not supported; use repeat_penalty")
	case r.PresencePenalty != 0:
		return badRequest("presence_penalty", "presence_penalty is not supported; use repeat_penalty")
	case len(r.Logprobs) > 0 && string(r.Logprobs) != "false" && string(r.Logprobs) != "null":
		return badRequest("logprobs", "logprobs are not supported (toy eval prints them)")
	case len(r.LogitBias) > 0:
		return badRequest("logit_bias", "logit_bias is not supported")
	case r.MaxTokens != nil && *r.MaxTokens < 0, r.MaxCompletionTokens != nil && *r.MaxCompletionTokens < 0:
		return badRequest("max_tokens", "max_tokens must be ≥ 0")
	case r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 100):
		return badRequest("temperature", "temperature must be between 0 and 100")
	case r.TopP != nil && (*r.TopP < 0 || *r.TopP > 1):
		return badRequest("top_p", "top_p must be between 0 and 1")
	case r.MinP != nil && (*r.MinP < 0 || *r.MinP > 1):
		return badRequest("min_p", "min_p must be between 0 and 1")
	case r.TopK != nil && *r.TopK < 0:
		return badRequest("top_k", "top_k must be ≥ 0")
	case r.RepeatPenalty != nil && *r.RepeatPenalty < 0:
		return badRequest("repeat_penalty", "repeat_penalty must be ≥ 0")
	}
	return nil
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
	if err := json.Unmarshal(r.Stop, &many); err != nil || len(many) > 16 {
		return nil, badRequest("stop", "stop must be a string or a list of at most 16 strings")
	}
	out := many[:0]
	for _, s := range many {
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// messages converts the request's messages for the chat template.
func (r *chatRequest) messages() ([]chat.Message, *apiError) {
	if len(r.Messages) == 0 {
		return nil, badRequest("messages", "messages must hold at least one message")
	}
	out := make([]chat.Message, len(r.Messages))
	for i, m := range r.Messages {
		role := m.Role
		switch role {
		case "system", "user", "assistant", "tool":
		case "developer": // OpenAI's newer name for system
			role = "system"
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", i), "unknown role %q: want system, user, assistant or tool", m.Role)
		}
		text, err := contentText(m.Content)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("messages[%d].content", i), "%v", err)
		}
		out[i] = chat.Message{Role: role, Content: text}
	}
	return out, nil
}

// contentText reads a message's content: a string, null, or a list of
// {"type": "text", "text": …} parts (joined with newlines).
func contentText(raw json.RawMessage) (string, error) {
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
		return "", fmt.Errorf("content must be a string or a list of text parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type != "text" {
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
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"` // prompt tokens whose keys and values were kept from the previous request
		} `json:"prompt_tokens_details"`
	}
	responseMessage struct {
		Role    string `json:"role,omitempty"`
		Content string `json:"content"`
	}
	chatChoice struct {
		Index        int              `json:"index"`
		Message      *responseMessage `json:"message,omitempty"`
		Delta        *responseDelta   `json:"delta,omitempty"`
		Logprobs     any              `json:"logprobs"`
		FinishReason *string          `json:"finish_reason"`
	}
	responseDelta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	textChoice struct {
		Index        int     `json:"index"`
		Text         string  `json:"text"`
		Logprobs     any     `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
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
