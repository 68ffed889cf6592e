// responses.go: OpenAI's Responses API, POST /v1/responses, which the
// newer SDKs call (client.responses.create): a request made into a chat
// request and run by the chat path, its answer written as a response
// object, or streamed as the Responses API's typed server-sent events.

package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesRequest is the body of POST /v1/responses.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`        // a string, or a list of messages and function call items
	Instructions       string          `json:"instructions"` // a system message before the input
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Temperature        *float32        `json:"temperature"`
	TopP               *float32        `json:"top_p"`
	Seed               *uint64         `json:"seed"` // llama-server's extension, as on chat
	Stream             bool            `json:"stream"`
	Tools              json.RawMessage `json:"tools"`       // [{type: "function", name, description, parameters, strict}]
	ToolChoice         json.RawMessage `json:"tool_choice"` // "auto", "none", "required" or {type: "function", name}
	ParallelToolCalls  *bool           `json:"parallel_tool_calls"`
	PreviousResponseID *string         `json:"previous_response_id"` // refused: toy keeps no responses
	Text               *struct {
		Format    *responsesFormat `json:"format"`
		Verbosity string           `json:"verbosity"` // accepted, ignored
	} `json:"text"`
	Reasoning *struct {
		Effort  string `json:"effort"`  // low, medium, high: the template's reasoning_effort (gpt-oss)
		Summary string `json:"summary"` // accepted, ignored
	} `json:"reasoning"`

	// Accepted and ignored: toy stores nothing and runs in the foreground.
	Store             *bool           `json:"store"`
	Metadata          map[string]any  `json:"metadata"`
	User              string          `json:"user"`
	Include           []string        `json:"include"`
	Truncation        string          `json:"truncation"`
	ServiceTier       string          `json:"service_tier"`
	SafetyIdentifier  string          `json:"safety_identifier"`
	PromptCacheKey    string          `json:"prompt_cache_key"`
	StreamOptions     json.RawMessage `json:"stream_options"`
	Background        *bool           `json:"background"` // true refused
	MaxToolCalls      *int            `json:"max_tool_calls"`
	TopLogprobs       *int            `json:"top_logprobs"` // only 0
	PromptCacheRetain string          `json:"prompt_cache_retention"`
}

// responsesFormat is text.format: {type: "text"}, {type: "json_object"}
// or {type: "json_schema", name, schema, strict}.
type responsesFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict"`
}

// responsesItem is one input item: a message (role, content a string or
// input_text/output_text parts), a function_call, or a
// function_call_output.
type responsesItem struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Status  string          `json:"status"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Args    string          `json:"arguments"`
	Output  json.RawMessage `json:"output"`
	Summary json.RawMessage `json:"summary"` // a reasoning item's, passed over
}

// chatRequest makes the Responses request a chat request.
func (r *responsesRequest) chatRequest() (*chatRequest, *apiError) {
	switch {
	case r.PreviousResponseID != nil && *r.PreviousResponseID != "":
		return nil, badRequest("previous_response_id", "previous_response_id is not supported: toy keeps no responses; send the conversation as input")
	case r.Background != nil && *r.Background:
		return nil, badRequest("background", "background is not supported: toy answers in the foreground")
	case r.TopLogprobs != nil && *r.TopLogprobs != 0:
		return nil, badRequest("top_logprobs", "top_logprobs is not supported on /v1/responses: use /v1/chat/completions")
	}
	c := &chatRequest{}
	c.Model, c.MaxTokens, c.Temperature, c.TopP, c.Seed = r.Model, r.MaxOutputTokens, r.Temperature, r.TopP, r.Seed
	c.Stream, c.ParallelToolCalls = r.Stream, r.ParallelToolCalls
	if r.Reasoning != nil {
		c.ReasoningEffort = r.Reasoning.Effort
	}
	if r.Instructions != "" {
		c.Messages = append(c.Messages, chatMessage{Role: "system", Content: jsonText(r.Instructions)})
	}
	msgs, e := responsesMessages(r.Input)
	if e != nil {
		return nil, e
	}
	c.Messages = append(c.Messages, msgs...)
	if len(r.Tools) > 0 && string(r.Tools) != "null" {
		var tools []struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		}
		if err := json.Unmarshal(r.Tools, &tools); err != nil {
			return nil, badRequest("tools", "tools must be a list of {type: \"function\", name, description, parameters}")
		}
		var out []map[string]any
		for i, t := range tools {
			if t.Type != "function" {
				return nil, badRequest(fmt.Sprintf("tools[%d].type", i), "tool type %q is not supported: only function tools", t.Type)
			}
			f := map[string]any{"name": t.Name}
			if t.Description != "" {
				f["description"] = t.Description
			}
			if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
				f["parameters"] = t.Parameters
			}
			out = append(out, map[string]any{"type": "function", "function": f})
		}
		c.Tools, _ = json.Marshal(out)
	}
	if len(r.ToolChoice) > 0 && string(r.ToolChoice) != "null" {
		var named struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		c.ToolChoice = r.ToolChoice
		if json.Unmarshal(r.ToolChoice, &named) == nil && named.Type == "function" {
			c.ToolChoice, _ = json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": named.Name}})
		}
	}
	if r.Text != nil && r.Text.Format != nil {
		f := r.Text.Format
		c.ResponseFormat = &responseFormat{Type: f.Type}
		if f.Type == "json_schema" {
			c.ResponseFormat.JSONSchema = &struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Schema      json.RawMessage `json:"schema"`
				Strict      *bool           `json:"strict"`
			}{f.Name, f.Description, f.Schema, f.Strict}
		}
	}
	return c, nil
}

func jsonText(s string) json.RawMessage { b, _ := json.Marshal(s); return b }

// responsesMessages reads input: a string (one user message) or a list of
// items. A function_call item becomes an assistant message's tool call
// (calls in a row, one message), a function_call_output a tool message.
func responsesMessages(raw json.RawMessage) ([]chatMessage, *apiError) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []chatMessage{{Role: "user", Content: jsonText(one)}}, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 {
		return nil, badRequest("input", "input must be a string or a non-empty list of items (messages, function_call, function_call_output)")
	}
	var out []chatMessage
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "", "message":
			text, err := contentText(it.Content, "input_text", "output_text", "text")
			if err != nil {
				return nil, badRequest(param+".content", "%v", err)
			}
			out = append(out, chatMessage{Role: it.Role, Content: jsonText(text)})
		case "function_call":
			if it.Name == "" {
				return nil, badRequest(param+".name", "a function_call needs a name")
			}
			var call wireToolCall
			call.ID, call.Type, call.Function.Name = it.CallID, "function", it.Name
			call.Function.Arguments = jsonText(it.Args)
			if n := len(out); n > 0 && out[n-1].Role == "assistant" && len(out[n-1].ToolCalls) > 0 {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
			} else {
				out = append(out, chatMessage{Role: "assistant", ToolCalls: []wireToolCall{call}})
			}
		case "function_call_output":
			text, err := contentText(it.Output, "input_text", "output_text", "text")
			if err != nil {
				return nil, badRequest(param+".output", "%v", err)
			}
			out = append(out, chatMessage{Role: "tool", Content: jsonText(text), ToolCallID: it.CallID})
		case "reasoning":
			// an earlier reply's reasoning: the templates drop it from history
		default:
			return nil, badRequest(param+".type", "input item type %q is not supported: want message, function_call or function_call_output", it.Type)
		}
	}
	return out, nil
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	if e := decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	c, e := req.chatRequest()
	if e != nil {
		writeError(w, e)
		return
	}
	j, e := s.chatJob(c)
	if e != nil {
		writeError(w, e)
		return
	}
	o := &responsesSink{w: w, streaming: req.Stream, base: s.responseObject(&req)}
	res, err := s.generate(r.Context(), j, o)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		e := generateError(w, err)
		if o.sse != nil {
			o.event("error", map[string]any{"code": e.Code, "message": e.Message, "param": e.Param})
			return
		}
		writeError(w, e)
		return
	}
	resp := o.finish(res)
	if req.Stream {
		typ := "response.completed"
		if resp["status"] == "incomplete" {
			typ = "response.incomplete"
		}
		o.event(typ, map[string]any{"response": resp})
		return
	}
	writeJSON(w, 200, resp)
}

// responseObject is the response before its output: the request's
// settings echoed, as OpenAI's response object carries them.
func (s *Server) responseObject(req *responsesRequest) map[string]any {
	var instructions any
	if req.Instructions != "" {
		instructions = req.Instructions
	}
	tools := json.RawMessage("[]")
	if len(req.Tools) > 0 && string(req.Tools) != "null" {
		tools = req.Tools
	}
	choice := json.RawMessage(`"auto"`)
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" {
		choice = req.ToolChoice
	}
	format := any(map[string]string{"type": "text"})
	if req.Text != nil && req.Text.Format != nil {
		format = req.Text.Format
	}
	meta := req.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	return map[string]any{
		"id": newID("resp"), "object": "response", "created_at": time.Now().Unix(), "status": "in_progress",
		"error": nil, "incomplete_details": nil, "instructions": instructions, "model": s.name,
		"output": []any{}, "parallel_tool_calls": req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		"previous_response_id": nil, "max_output_tokens": req.MaxOutputTokens, "temperature": req.Temperature,
		"top_p": req.TopP, "tools": tools, "tool_choice": choice, "text": map[string]any{"format": format},
		"store": false, "metadata": meta, "usage": nil,
	}
}

// responsesSink streams a generation as the Responses API's events: the
// reasoning as a reasoning item, the text as a message item, then each
// tool call as a function_call item. Not streaming, it only keeps the
// items for the answer.
type responsesSink struct {
	w         http.ResponseWriter
	streaming bool
	base      map[string]any
	sse       *sse
	seq       int   // the events' sequence_number
	output    []any // finished items
	// The item being streamed: a reasoning's or a message's text so far.
	open     map[string]any
	openKind string // "reasoning", "message" or ""
	openText strings.Builder
}

// event sends one server-sent event of type typ: "event: typ" and the
// data with its type and sequence number.
func (o *responsesSink) event(typ string, data map[string]any) {
	if o.sse == nil {
		o.sse = newSSE(o.w)
	}
	data["type"], data["sequence_number"] = typ, o.seq
	o.seq++
	fmt.Fprintf(o.w, "event: %s\n", typ)
	o.sse.send(data)
}

func (o *responsesSink) queued() {
	if o.streaming && o.sse == nil {
		o.begin()
	}
}

// begin sends response.created and response.in_progress.
func (o *responsesSink) begin() {
	o.event("response.created", map[string]any{"response": o.base})
	o.event("response.in_progress", map[string]any{"response": o.base})
}

func (o *responsesSink) start(int) {
	if o.streaming && o.sse == nil {
		o.begin()
	}
}

func (o *responsesSink) text(_ int, text, reasoning string, _ []tokenLogprob) {
	if reasoning != "" {
		o.write("reasoning", reasoning)
	}
	if text != "" {
		o.write("message", text)
	}
}

// write adds text to the open item of kind, closing another kind's
// and opening one as needed.
func (o *responsesSink) write(kind, text string) {
	if o.openKind != kind {
		o.close()
		o.openKind = kind
		if kind == "reasoning" {
			o.open = map[string]any{"type": "reasoning", "id": newID("rs"), "summary": []any{}}
		} else {
			o.open = map[string]any{"type": "message", "id": newID("msg"), "status": "in_progress", "role": "assistant", "content": []any{}}
		}
		if o.streaming {
			o.event("response.output_item.added", map[string]any{"output_index": len(o.output), "item": o.open})
			if kind == "message" {
				o.event("response.content_part.added", map[string]any{"item_id": o.open["id"], "output_index": len(o.output),
					"content_index": 0, "part": outputText("")})
			}
		}
	}
	o.openText.WriteString(text)
	if o.streaming {
		typ := "response.output_text.delta"
		if kind == "reasoning" {
			typ = "response.reasoning_text.delta"
		}
		o.event(typ, map[string]any{"item_id": o.open["id"], "output_index": len(o.output), "content_index": 0, "delta": text})
	}
}

// close finishes the open item, if any.
func (o *responsesSink) close() {
	if o.openKind == "" {
		return
	}
	text, id, index := o.openText.String(), o.open["id"], len(o.output)
	item := map[string]any{}
	for k, v := range o.open {
		item[k] = v
	}
	if o.openKind == "reasoning" {
		item["content"] = []any{map[string]any{"type": "reasoning_text", "text": text}}
		if o.streaming {
			o.event("response.reasoning_text.done", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "text": text})
		}
	} else {
		item["status"], item["content"] = "completed", []any{outputText(text)}
		if o.streaming {
			o.event("response.output_text.done", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "text": text})
			o.event("response.content_part.done", map[string]any{"item_id": id, "output_index": index, "content_index": 0, "part": outputText(text)})
		}
	}
	if o.streaming {
		o.event("response.output_item.done", map[string]any{"output_index": index, "item": item})
	}
	o.output = append(o.output, item)
	o.open, o.openKind = nil, ""
	o.openText.Reset()
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

func (o *responsesSink) end(_ int, c *choice) {
	text, reasoning, _ := c.rest()
	o.text(0, text, reasoning, nil)
	if len(o.output) == 0 && o.openKind != "message" && len(c.calls) == 0 {
		o.write("message", "") // an empty reply is an empty message
	}
	o.close()
	for _, call := range c.calls {
		item := map[string]any{"type": "function_call", "id": newID("fc"), "call_id": call.ID, "name": call.Name,
			"arguments": call.Arguments, "status": "completed"}
		if o.streaming {
			index := len(o.output)
			added := map[string]any{}
			for k, v := range item {
				added[k] = v
			}
			added["arguments"], added["status"] = "", "in_progress"
			o.event("response.output_item.added", map[string]any{"output_index": index, "item": added})
			o.event("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": index, "delta": call.Arguments})
			o.event("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": index, "name": call.Name, "arguments": call.Arguments})
			o.event("response.output_item.done", map[string]any{"output_index": index, "item": item})
		}
		o.output = append(o.output, item)
	}
}

// finish is the whole response: status (incomplete when the reply ran out
// of max_output_tokens or the context), output and usage.
func (o *responsesSink) finish(res *outcome) map[string]any {
	resp := map[string]any{}
	for k, v := range o.base {
		resp[k] = v
	}
	resp["status"] = "completed"
	if c := res.choices[0]; c.reason == "length" {
		resp["status"], resp["incomplete_details"] = "incomplete", map[string]string{"reason": "max_output_tokens"}
	}
	if o.output == nil {
		o.output = []any{}
	}
	resp["output"] = o.output
	resp["usage"] = map[string]any{
		"input_tokens": res.prompt, "input_tokens_details": map[string]int{"cached_tokens": res.cached},
		"output_tokens": res.generated, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
		"total_tokens": res.prompt + res.generated,
	}
	return resp
}
