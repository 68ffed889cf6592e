package serve

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRequest feeds arbitrary bodies to the four request decoders and the
// checks that turn a body into a job (go test -fuzz FuzzRequest
// ./toy/serve): none may panic, and a job they accept must be one the
// generation loop can run.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		`{"messages": [{"role": "user", "content": "hi"}], "n": 2, "logprobs": true, "top_logprobs": 3}`,
		`{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]}, {"role": "tool", "tool_call_id": "a", "content": "1"}], "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"}`,
		`{"prompt": [1, 2, 3], "logprobs": 5, "logit_bias": {"7": -100}, "stop": ["a", "b"], "frequency_penalty": 1}`,
		`{"model": "m", "messages": [{"role": "user", "content": "x", "tool_calls": []}], "options": {"num_ctx": 4, "stop": "x"}, "think": false}`,
		`{"model": "m", "prompt": "x", "context": [1, 2], "raw": true, "options": {"num_predict": -2, "seed": -1}}`,
		`{"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}], "tool_choice": {"type": "function", "function": {"name": "g"}}}`,
	} {
		f.Add([]byte(seed))
	}
	s := newServer(f, modelWithTemplate(f), Options{ContextSize: 64})
	check := func(j *job, e *apiError) {
		if e != nil {
			if e.Status < 400 || e.Message == "" {
				f.Fatalf("error without a status or message: %+v", e)
			}
			return
		}
		if len(j.prompt) == 0 || len(j.prompt) >= s.ctxSize || j.choices < 1 || j.choices > maxChoices ||
			j.maxTokens < 0 || len(j.prompt)+j.maxTokens > s.ctxSize || j.topLogprobs > maxTopLogprobs {
			f.Fatalf("accepted a job the loop cannot run: prompt %d, choices %d, max %d", len(j.prompt), j.choices, j.maxTokens)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var c chatRequest
		if e := decodeFrom(bytes.NewReader(body), &c); e == nil {
			check(s.chatJob(&c))
		}
		var p completionRequest
		if e := decodeFrom(bytes.NewReader(body), &p); e == nil {
			check(s.completionJob(&p))
		}
		var oc ollamaChatRequest
		if e := decodeFrom(bytes.NewReader(body), &oc); e == nil && len(oc.Messages) > 0 {
			check(s.ollamaChatJob(&oc))
		}
		var og ollamaGenerateRequest
		if e := decodeFrom(bytes.NewReader(body), &og); e == nil && (og.Prompt != "" || len(og.Context) > 0) {
			check(s.ollamaGenerateJob(&og))
		}
	})
}

// FuzzToolParse reads arbitrary replies in each tool-call format: no
// panics, and every call it finds has a name and an object for arguments.
func FuzzToolParse(f *testing.F) {
	for _, seed := range []string{
		"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
		"x <tool_call>{\"name\": \"f\", \"arguments\": \"{}\"}",
		"<|python_tag|>{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\"}",
		"[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}, \"id\": \"abcdefghi\"}]",
		"{\"name\": 3}", "<tool_call><tool_call>", "[TOOL_CALLS]",
		"<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nx\n</parameter>\n</function>\n</tool_call>",
		"<tool_call><function=f><parameter=a>{\"k\": [1, 2]}</parameter>", "<tool_call>\n<function=>\n</tool_call>",
		"<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key>\n<arg_value>x</arg_value>\n</tool_call>",
		"<tool_call>f<arg_key>a</arg_key><arg_value>[1", "<tool_call>\n<arg_key>a</arg_key>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, format := range []toolFormat{hermesFormat, llama3Format, mistralFormat, xmlFormat, glmFormat} {
			tc := &toolCalls{format: format}
			_ = tc.holdFrom(text)
			calls, _, ok := tc.parse(text)
			if ok != (len(calls) > 0) {
				t.Fatalf("%v: ok %v with %d calls", format, ok, len(calls))
			}
			for _, c := range calls {
				var args map[string]any
				if c.Name == "" || json.Unmarshal([]byte(c.Arguments), &args) != nil {
					t.Fatalf("%v: call %+v in %q", format, c, text)
				}
			}
		}
	})
}
