package serve

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// responseEvents reads the Responses API's server-sent events: "event: T"
// then "data: {…}" whose type is T.
func responseEvents(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	typ := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var e map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
				t.Fatalf("event %q: %v", line, err)
			}
			if e["type"] != typ {
				t.Errorf("event line %q, data type %v", typ, e["type"])
			}
			if e["sequence_number"] != float64(len(out)) {
				t.Errorf("event %d has sequence_number %v", len(out), e["sequence_number"])
			}
			out = append(out, e)
			typ = ""
		default:
			t.Fatalf("line %q is no SSE", line)
		}
	}
	return out
}

func stream(t *testing.T, s *Server, path, body string) []map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
	if ct := rec.Header().Get("Content-Type"); rec.Code != 200 || ct != "text/event-stream" {
		t.Fatalf("%d %q: %s", rec.Code, ct, rec.Body.String())
	}
	return responseEvents(t, rec.Body)
}

// outputText joins a response's output_text parts.
func outputTextOf(resp any) string {
	var b strings.Builder
	for _, item := range asList(field(resp, "output")) {
		if field(item, "type") == "message" {
			for _, p := range asList(field(item, "content")) {
				if field(p, "type") == "output_text" {
					b.WriteString(field(p, "text").(string))
				}
			}
		}
	}
	return b.String()
}

// TestResponses: /v1/responses gives the reply /v1/chat/completions gives
// for the same conversation (instructions a system message, input a string
// or input_text parts), with its usage and status; streamed, the Responses
// events in order, their deltas making the same text.
func TestResponses(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	_, chat := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "func main() {"}], "max_tokens": 10, "temperature": 0}`)
	want := field(chat, "choices", 0, "message", "content").(string)
	wantStatus := "completed"
	if field(chat, "choices", 0, "finish_reason") == "length" {
		wantStatus = "incomplete"
	}
	for _, body := range []string{
		`{"model": "x", "instructions": "Be brief.", "input": "func main() {", "max_output_tokens": 10, "temperature": 0, "store": false, "metadata": {"k": "v"}}`,
		`{"model": "x", "input": [{"role": "developer", "content": "Be brief."}, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "func main() {"}]}], "max_output_tokens": 10, "temperature": 0}`,
	} {
		code, out := post(t, s, "/v1/responses", body)
		if code != 200 {
			t.Fatalf("%d %v", code, out)
		}
		if got := outputTextOf(out); got != want || out["object"] != "response" || out["status"] != wantStatus || !strings.HasPrefix(out["id"].(string), "resp") {
			t.Errorf("%s:\nresponse %v\nchat %q", body, out, want)
		}
		if field(out, "usage", "input_tokens") != field(chat, "usage", "prompt_tokens") || field(out, "usage", "output_tokens") != field(chat, "usage", "completion_tokens") {
			t.Errorf("usage %v, chat's %v", out["usage"], chat["usage"])
		}
		if wantStatus == "incomplete" && field(out, "incomplete_details", "reason") != "max_output_tokens" {
			t.Errorf("incomplete_details %v", out["incomplete_details"])
		}
	}

	evs := stream(t, s, "/v1/responses", `{"instructions": "Be brief.", "input": "func main() {", "max_output_tokens": 10, "temperature": 0, "stream": true}`)
	var types []string
	var deltas strings.Builder
	for _, e := range evs {
		types = append(types, e["type"].(string))
		if e["type"] == "response.output_text.delta" {
			deltas.WriteString(e["delta"].(string))
		}
	}
	last := "response." + map[string]string{"completed": "completed", "incomplete": "incomplete"}[wantStatus]
	head := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", last}
	if len(types) < len(head)+len(tail)+1 || strings.Join(types[:4], " ") != strings.Join(head, " ") || strings.Join(types[len(types)-4:], " ") != strings.Join(tail, " ") {
		t.Fatalf("events %v", types)
	}
	if deltas.String() != want || evs[len(evs)-4]["text"] != want || outputTextOf(evs[len(evs)-1]["response"]) != want {
		t.Errorf("streamed %q, done %q, want %q", deltas.String(), evs[len(evs)-4]["text"], want)
	}
	if field(evs[0], "response", "status") != "in_progress" || field(evs[len(evs)-1], "response", "status") != wantStatus {
		t.Errorf("statuses %v, %v", field(evs[0], "response", "status"), field(evs[len(evs)-1], "response", "status"))
	}

	for body, param := range map[string]string{
		`{"input": "hi", "previous_response_id": "resp_1"}`:                   "previous_response_id",
		`{"input": "hi", "max_tokens": 3}`:                                    "",
		`{"input": 3}`:                                                        "input",
		`{"input": [{"type": "input_image", "image_url": "x"}]}`:              "input[0].type",
		`{"input": [{"role": "user", "content": [{"type": "input_image"}]}]}`: "input[0].content",
		`{"input": "hi", "tools": [{"type": "web_search"}]}`:                  "tools[0].type",
	} {
		code, out := post(t, s, "/v1/responses", body)
		if code != 400 || (param != "" && field(out, "error", "param") != param) {
			t.Errorf("%s: %d %v", body, code, out)
		}
	}
}

// weatherTool is a function tool in the Responses API's (flat) shape.
const weatherTool = `[{"type": "function", "name": "get_weather", "description": "The weather at a place.", "parameters": {"type": "object", "properties": {"place": {"type": "string"}}, "required": ["place"]}}]`

// TestResponsesTools: a reply that calls a function becomes a
// function_call output item (whole and streamed, with its arguments
// events); function_call and function_call_output items in the input reach
// the template as the assistant's call and the tool's reply.
func TestResponsesTools(t *testing.T) {
	s, _ := toolServer(t, "qwen2.5")
	reply := "Looking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"place\": \"Paris\"}}\n</tool_call>"
	ask := `{"input": "Weather in Paris?", "tools": ` + weatherTool + `, "temperature": 0`
	say(s, reply)
	code, out := post(t, s, "/v1/responses", ask+`}`)
	if code != 200 {
		t.Fatalf("%d %v", code, out)
	}
	items := asList(out["output"])
	if len(items) != 2 || field(items, 0, "type") != "message" || outputTextOf(out) != "Looking." || field(items, 1, "type") != "function_call" ||
		field(items, 1, "name") != "get_weather" || field(items, 1, "call_id") == "" || out["status"] != "completed" {
		t.Fatalf("output %v", items)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(field(items, 1, "arguments").(string)), &args); err != nil || args["place"] != "Paris" {
		t.Errorf("arguments %v", field(items, 1, "arguments"))
	}

	say(s, reply)
	evs := stream(t, s, "/v1/responses", ask+`, "stream": true}`)
	var done map[string]any
	for _, e := range evs {
		if e["type"] == "response.function_call_arguments.done" {
			done = e
		}
	}
	if done == nil || done["arguments"] != field(items, 1, "arguments") || done["output_index"] != 1.0 {
		t.Errorf("function_call_arguments.done %v", done)
	}
	if final := evs[len(evs)-1]; final["type"] != "response.completed" || field(final, "response", "output", 1, "name") != "get_weather" {
		t.Errorf("last event %v", final)
	}

	// a forced call: tool_choice {type: function, name}
	say(s, `{"place": "Oslo"}}`+"\n</tool_call>")
	code, out = post(t, s, "/v1/responses", ask+`, "tool_choice": {"type": "function", "name": "get_weather"}}`)
	if code != 200 || field(out, "output", 0, "type") != "function_call" || field(out, "output", 0, "name") != "get_weather" {
		t.Errorf("forced call: %d %v", code, out)
	}

	sc := say(s, "Sunny.")
	code, out = post(t, s, "/v1/responses", `{"tools": `+weatherTool+`, "input": [
		{"role": "user", "content": "Weather in Paris?"},
		{"type": "function_call", "call_id": "call00001", "name": "get_weather", "arguments": "{\"place\": \"Paris\"}"},
		{"type": "function_call_output", "call_id": "call00001", "output": "18 degrees, sunny"}]}`)
	if code != 200 || outputTextOf(out) != "Sunny." {
		t.Fatalf("%d %v", code, out)
	}
	prompt := promptText(s, sc)
	if !strings.Contains(prompt, `"name": "get_weather"`) || !strings.Contains(prompt, "Paris") || !strings.Contains(prompt, "18 degrees, sunny") {
		t.Errorf("prompt lacks the call or its output:\n%s", prompt)
	}
}

// TestResponsesReasoning: a reply's <think> part is a reasoning item
// before the message, whole and streamed (reasoning_text events first).
func TestResponsesReasoning(t *testing.T) {
	s, _ := toolServer(t, "qwen3")
	const reply = "<think>\nTwo and two.\n</think>\n\n2 + 2 = 4."
	say(s, reply)
	code, out := post(t, s, "/v1/responses", `{"input": "2 + 2?", "temperature": 0}`)
	items := asList(out["output"])
	if code != 200 || len(items) != 2 || field(items, 0, "type") != "reasoning" || field(items, 0, "content", 0, "text") != "Two and two." ||
		field(items, 1, "type") != "message" || outputTextOf(out) != "2 + 2 = 4." {
		t.Fatalf("%d %v", code, out)
	}
	say(s, reply)
	evs := stream(t, s, "/v1/responses", `{"input": "2 + 2?", "temperature": 0, "stream": true}`)
	var reasoning, text strings.Builder
	firstText, lastReasoning := -1, -1
	for i, e := range evs {
		switch e["type"] {
		case "response.reasoning_text.delta":
			reasoning.WriteString(e["delta"].(string))
			lastReasoning = i
		case "response.output_text.delta":
			text.WriteString(e["delta"].(string))
			if firstText < 0 {
				firstText = i
			}
		}
	}
	if reasoning.String() != "Two and two." || text.String() != "2 + 2 = 4." || lastReasoning > firstText {
		t.Errorf("streamed reasoning %q, text %q; events %v", reasoning.String(), text.String(), evs)
	}
	if final := evs[len(evs)-1]; outputTextOf(final["response"]) != "2 + 2 = 4." || field(final, "response", "output", 0, "type") != "reasoning" {
		t.Errorf("last event %v", final)
	}
}

// TestResponsesFormat: text.format json_schema keeps the reply to the
// schema, as chat's response_format does.
func TestResponsesFormat(t *testing.T) {
	s := newServer(t, modelWithTemplate(t), Options{})
	code, out := post(t, s, "/v1/responses", `{"input": "Yes or no?", "max_output_tokens": 40, "temperature": 0,
		"text": {"format": {"type": "json_schema", "name": "answer", "strict": true, "schema": {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"], "additionalProperties": false}}}}`)
	var v struct {
		A *bool `json:"a"`
	}
	if code != 200 || json.Unmarshal([]byte(outputTextOf(out)), &v) != nil || v.A == nil || out["status"] != "completed" ||
		field(out, "text", "format", "type") != "json_schema" {
		t.Errorf("%d %v", code, out)
	}
	if code, out := post(t, s, "/v1/responses", `{"input": "x", "text": {"format": {"type": "yaml"}}}`); code != 400 {
		t.Errorf("format yaml: %d %v", code, out)
	}
}
