package serve

import (
	"compress/gzip"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tokenizer"
)

// The tool-calling tests run the server over a scripted model: Llama 3's
// real tokenizer (tests/reference/vocab; its <|python_tag|> is a control
// token, "<tool_call>" and "[TOOL_CALLS]" plain text), the real chat
// templates of toy/chat/testdata, and a session that answers each prompt
// with a reply fixed in advance. The replies are what the templates
// themselves write for an assistant's tool call, so parsing is checked
// against the templates' own format; the prompts are checked against
// Hugging Face's renderings of the same conversation (toy/chat's golden).

var llama3Tokenizer = sync.OnceValues(func() (*tokenizer.Tokenizer, error) {
	v, err := llama3Vocab()
	if err != nil {
		return nil, err
	}
	return tokenizer.New(v)
})

// llama3Vocab reads Llama 3's vocabulary from tests/reference/vocab.
func llama3Vocab() (tokenizer.Vocab, error) {
	f, err := os.Open("../../tests/reference/vocab/llama3.json.gz")
	if err != nil {
		return tokenizer.Vocab{}, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return tokenizer.Vocab{}, err
	}
	var v struct {
		Model, Pre string
		Tokens     []string
		TokenType  []int32 `json:"token_type"`
		Merges     []string
		BOS, EOS   int32
	}
	if err := json.NewDecoder(z).Decode(&v); err != nil {
		return tokenizer.Vocab{}, err
	}
	return tokenizer.Vocab{Model: v.Model, Pre: v.Pre, Tokens: v.Tokens, Types: v.TokenType, Merges: v.Merges,
		BOS: v.BOS, EOS: v.EOS, UNK: -1, PAD: -1}, nil
}

// fakeNet stands in for an architecture: a vocabulary and a context, and
// no forward pass (the scripted session answers instead).
type fakeNet struct{ vocab int }

func (fakeNet) Hidden([]int32, *nn.Cache) *tensor.Tensor { panic("fakeNet has no forward pass") }
func (fakeNet) Logits(*tensor.Tensor) *tensor.Tensor     { panic("fakeNet has no forward pass") }
func (fakeNet) NewCache(int) *nn.Cache                   { return nil }
func (n fakeNet) VocabSize() int                         { return n.vocab }
func (fakeNet) ContextLength() int                       { return 8192 }
func (fakeNet) Weights() []nn.Named                      { return nil }
func (fakeNet) SetMetadata(*gguf.Writer)                 {}

// scripted is a session whose model replies with script, then EOS. Its first
// Next is the prompt (each test request gets a fresh one).
type scripted struct {
	vocab  int
	eos    int32
	script []int32
	prompt []int32
	tokens []int32
}

func (s *scripted) Next(ids []int32) ([]float32, error) {
	if s.prompt == nil {
		s.prompt = slices.Clone(ids)
	}
	s.tokens = append(s.tokens, ids...)
	next := s.eos
	if k := len(s.tokens) - len(s.prompt); k < len(s.script) {
		next = s.script[k]
	}
	logits := make([]float32, s.vocab)
	logits[next] = 10
	return logits, nil
}
func (s *scripted) Tokens() []int32 { return s.tokens }
func (s *scripted) Truncate(n int)  { s.tokens = s.tokens[:min(n, len(s.tokens))] }
func (s *scripted) Capacity() int   { return 8192 }

// toolServer serves the chat template in toy/chat/testdata/templates/name.jinja
// over the scripted model.
func toolServer(t *testing.T, name string) (*Server, *chat.Template) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("../chat/testdata/templates", name+".jinja"))
	if err != nil {
		t.Fatal(err)
	}
	return newTemplateServer(t, string(src)), chat.MustParse(string(src))
}

// newTemplateServer serves the chat template src over the scripted model.
func newTemplateServer(t *testing.T, src string) *Server {
	t.Helper()
	tok, err := llama3Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := &toy.Model{Path: "scripted.gguf", Arch: "llama", File: f, Net: fakeNet{tok.VocabSize()}, Tokenizer: tok}
	return newServer(t, m, Options{ChatTemplate: src, Name: "scripted"})
}

// say makes the next request's reply text (special tokens parsed).
func say(s *Server, reply string) *scripted {
	tok := s.model.Tokenizer
	sc := &scripted{vocab: tok.VocabSize(), eos: tok.EOS(), script: tok.Encode(reply, tokenizerOptions(false))}
	script(s, sc)
	return sc
}

// script makes l every slot's session, each request running it itself (a
// stand-in takes its prompt whole, in one call).
func script(s *Server, l lm) {
	s.work = nil
	for _, sl := range s.pool.slots {
		sl.lm = l
	}
}

// promptText is the prompt as text, special tokens written out.
func promptText(s *Server, sc *scripted) string {
	var b strings.Builder
	for _, id := range sc.prompt {
		b.WriteString(s.model.Tokenizer.Piece(id))
	}
	return b.String()
}

type goldenFile struct {
	Conversations map[string][]chat.Message `json:"conversations"`
	Tools         json.RawMessage           `json:"tools"`
	Cases         []struct {
		Template, Conversation string
		AddGenerationPrompt    bool    `json:"add_generation_prompt"`
		Tools                  bool    `json:"tools"`
		Output                 string  `json:"output"`
		BOS                    *string `json:"bos_token"`
		EOS                    *string `json:"eos_token"`
	} `json:"cases"`
}

var golden = sync.OnceValues(func() (*goldenFile, error) {
	b, err := os.ReadFile("../chat/testdata/golden.json")
	if err != nil {
		return nil, err
	}
	var g goldenFile
	return &g, json.Unmarshal(b, &g)
})

// wireMessages writes a conversation as an OpenAI client sends it: a call's
// arguments as a string holding JSON, content null beside calls.
func wireMessages(t *testing.T, msgs []chat.Message) string {
	t.Helper()
	var out []map[string]any
	for _, m := range msgs {
		w := map[string]any{"role": m.Role, "content": m.Content}
		if len(m.ToolCalls) > 0 {
			var calls []map[string]any
			for _, c := range m.ToolCalls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function",
					"function": map[string]any{"name": c.Function.Name, "arguments": string(c.Function.Arguments)}})
			}
			w["tool_calls"], w["content"] = calls, nil
		}
		if m.ToolCallID != "" {
			w["tool_call_id"] = m.ToolCallID
		}
		if m.Name != "" {
			w["name"] = m.Name
		}
		out = append(out, w)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// templateCall is what template writes for the assistant's call in msgs
// (the last message): the rendering with it less the rendering before it,
// less the end-of-turn token — the reply a model trained on the template
// gives.
func templateCall(t *testing.T, s *Server, tmpl *chat.Template, msgs []chat.Message, tools json.RawMessage) string {
	t.Helper()
	toolsVar, err := chat.FromJSON(tools)
	if err != nil {
		t.Fatal(err)
	}
	render := func(msgs []chat.Message, gen bool) string {
		opts := s.model.ChatOptions(gen)
		opts.Vars = map[string]any{"tools": toolsVar, "date_string": "26 Jul 2024"}
		out, err := tmpl.Render(msgs, opts)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before, with := render(msgs[:len(msgs)-1], true), render(msgs, false)
	if !strings.HasPrefix(with, before) {
		t.Fatalf("the rendering with the call does not extend the prompt:\n%q\n%q", before, with)
	}
	reply := with[len(before):]
	for _, end := range []string{"<|im_end|>\n", "<|eot_id|>", "<|end_of_text|>"} {
		reply = strings.TrimSuffix(reply, end)
	}
	return reply
}

const weatherArgs = `{"place": "Paris, \"France\"", "days": 2}`

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// TestToolTemplates, for each template that renders tools: (1) a
// conversation with a call and its result, sent as an OpenAI client sends
// it, renders to Hugging Face's prompt for it; (2) the template's own
// rendering of a call, given as the model's reply, comes back as that call
// (whole and streamed, never as content).
func TestToolTemplates(t *testing.T) {
	g, err := golden()
	if err != nil {
		t.Fatal(err)
	}
	var tools []any
	json.Unmarshal(g.Tools, &tools)
	for _, name := range []string{"qwen2.5", "qwen3", "qwen3.5", "glm4.6", "llama3.1", "llama3.2", "mistral-v0.3"} {
		t.Run(name, func(t *testing.T) {
			s, tmpl := toolServer(t, name)
			if f := detectToolFormat(tmpl); f == unknownFormat {
				t.Fatalf("no tool-call format found in %s", name)
			}
			conv := g.Conversations["tool-call"]
			var want string
			for _, c := range g.Cases {
				if c.Template == name && c.Conversation == "tool-call" && c.AddGenerationPrompt && c.Tools {
					want = c.Output
					if c.BOS != nil { // the golden's special tokens → this tokenizer's
						want = strings.ReplaceAll(want, *c.BOS, s.model.Tokenizer.Token(s.model.Tokenizer.BOS()))
					}
					if c.EOS != nil && name == "mistral-v0.3" {
						want = strings.ReplaceAll(want, *c.EOS, s.model.Tokenizer.Token(s.model.Tokenizer.EOS()))
					}
				}
			}
			if want == "" {
				t.Fatal("no golden case")
			}
			body := `{"messages": ` + wireMessages(t, conv) + `, "tools": ` + string(g.Tools) +
				`, "temperature": 0, "chat_template_kwargs": {"date_string": "26 Jul 2024"}}`
			answer := "It is 21 degrees and clear in Paris."
			if strings.HasSuffix(want, "<think>\n") { // Qwen3.5 opens the reasoning: the model closes it
				answer = "</think>\n\n" + answer
			}
			sc := say(s, answer)
			code, out := post(t, s, "/v1/chat/completions", body)
			if code != 200 {
				t.Fatalf("%d %v", code, out)
			}
			if got := promptText(s, sc); got != want {
				t.Errorf("prompt\n got %q\nwant %q (Hugging Face's)", got, want)
			}
			if field(out, "choices", 0, "message", "content") != "It is 21 degrees and clear in Paris." || field(out, "choices", 0, "finish_reason") != "stop" {
				t.Errorf("answer after the tool result: %v", out)
			}

			// The model calls the tool as the template writes calls.
			user := []chat.Message{{Role: "user", Content: "Weather in Paris?"}}
			reply := templateCall(t, s, tmpl, append(user, conv[2]), g.Tools)
			ask := `{"messages": ` + wireMessages(t, user) + `, "tools": ` + string(g.Tools) + `, "temperature": 0, "chat_template_kwargs": {"date_string": "26 Jul 2024"}`
			say(s, reply)
			_, out = post(t, s, "/v1/chat/completions", ask+`}`)
			call := field(out, "choices", 0, "message", "tool_calls", 0)
			id, _ := field(call, "id").(string)
			args, _ := field(call, "function", "arguments").(string)
			var content any // what the template writes before the call (Qwen3's empty <think></think> is reasoning, not content)
			if before, _, _ := strings.Cut(reply, "<tool_call>"); strings.TrimSpace(before) != "" && before != reply && !strings.HasPrefix(before, "<think>") && !strings.Contains(before, "</think>") {
				content = strings.TrimSpace(before)
			}
			if field(out, "choices", 0, "finish_reason") != "tool_calls" || field(out, "choices", 0, "message", "content") != content ||
				field(call, "type") != "function" || field(call, "function", "name") != "get_weather" || !sameJSON(args, weatherArgs) || !validCallID(id) {
				t.Fatalf("reply %q: %v", reply, out)
			}
			if name == "mistral-v0.3" && id != "call0001a" {
				t.Errorf("Mistral's call id %q, want the model's call0001a", id)
			}

			say(s, reply)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(ask+`, "stream": true}`)))
			chunks, done := events(t, rec.Body)
			var calls []any
			for _, c := range chunks {
				if text, _ := field(c, "choices", 0, "delta", "content").(string); strings.Contains(text, "get_weather") {
					t.Errorf("streamed content %q: the call leaked", text)
				}
				calls = append(calls, asList(field(c, "choices", 0, "delta", "tool_calls"))...)
			}
			if !done || len(calls) != 1 || field(calls[0], "index") != 0.0 || field(calls[0], "function", "name") != "get_weather" ||
				!sameJSON(field(calls[0], "function", "arguments").(string), weatherArgs) ||
				field(chunks[len(chunks)-1], "choices", 0, "finish_reason") != "tool_calls" {
				t.Errorf("streamed call: %v", chunks)
			}
		})
	}
}

// TestToolReplies: what is and is not a call, in the Hermes and Llama formats.
func TestToolReplies(t *testing.T) {
	g, err := golden()
	if err != nil {
		t.Fatal(err)
	}
	ask := func(extra string) string {
		return `{"messages": [{"role": "user", "content": "Paris and Rome?"}], "tools": ` + string(g.Tools) + `, "temperature": 0` + extra + `}`
	}
	call := func(place string) string {
		return "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"place\": \"" + place + "\"}}\n</tool_call>"
	}
	s, _ := toolServer(t, "qwen2.5")
	for _, c := range []struct {
		name, reply, extra string
		content            any
		calls              []string // places
	}{
		{"content, then two calls", "Let me look both up.\n" + call("Paris") + "\n" + call("Rome"), "", "Let me look both up.", []string{"Paris", "Rome"}},
		{"parallel_tool_calls false", call("Paris") + "\n" + call("Rome"), `, "parallel_tool_calls": false`, nil, []string{"Paris"}},
		{"no closing tag at the end", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"place\": \"Oslo\"}}", "", nil, []string{"Oslo"}},
		{"arguments as a string", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"place\\\": \\\"Oslo\\\"}\"}\n</tool_call>", "", nil, []string{"Oslo"}},
		{"broken JSON", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"place\": }\n</tool_call>", "", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"place\": }\n</tool_call>", nil},
		{"a function not offered", "<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call>", "", "<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call>", nil},
		{"text after the call", call("Paris") + " and more", "", call("Paris") + " and more", nil},
		{"plain text", "Sunny, I think.", "", "Sunny, I think.", nil},
		{"tool_choice none: not read", call("Paris"), `, "tool_choice": "none"`, call("Paris"), nil},
	} {
		for _, stream := range []bool{false, true} {
			sc := say(s, c.reply)
			var content any
			var places []string
			finish := ""
			if !stream {
				_, out := post(t, s, "/v1/chat/completions", ask(c.extra))
				content, finish = field(out, "choices", 0, "message", "content"), field(out, "choices", 0, "finish_reason").(string)
				for _, tc := range asList(field(out, "choices", 0, "message", "tool_calls")) {
					var a struct{ Place string }
					json.Unmarshal([]byte(field(tc, "function", "arguments").(string)), &a)
					places = append(places, a.Place)
				}
			} else {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(ask(c.extra+`, "stream": true`))))
				chunks, _ := events(t, rec.Body)
				var text strings.Builder
				for _, ch := range chunks {
					if t, ok := field(ch, "choices", 0, "delta", "content").(string); ok {
						text.WriteString(t)
					}
					for _, tc := range asList(field(ch, "choices", 0, "delta", "tool_calls")) {
						var a struct{ Place string }
						json.Unmarshal([]byte(field(tc, "function", "arguments").(string)), &a)
						places = append(places, a.Place)
					}
					if f, ok := field(ch, "choices", 0, "finish_reason").(string); ok {
						finish = f
					}
				}
				content = text.String()
				if content == "" && c.content == nil {
					content = nil
				}
			}
			wantFinish := "stop"
			if len(c.calls) > 0 {
				wantFinish = "tool_calls"
			}
			if content != c.content || !slices.Equal(places, c.calls) || finish != wantFinish {
				t.Errorf("%s (stream %v): content %q, calls %v, finish %s; want %q, %v, %s", c.name, stream, content, places, finish, c.content, c.calls, wantFinish)
			}
			if strings.Contains(c.extra, "none") && strings.Contains(promptText(s, sc), "<tools>") {
				t.Errorf("tool_choice none: the prompt lists the tools")
			}
		}
	}

	// Llama 3.1: a call after <|python_tag|>, a control token the decoder
	// would drop.
	s, _ = toolServer(t, "llama3.1")
	sc := say(s, `<|python_tag|>{"name": "get_weather", "parameters": {"place": "Rome"}}`)
	if sc.script[0] != s.model.Tokenizer.ID("<|python_tag|>") {
		t.Fatalf("script %v does not start with the <|python_tag|> token", sc.script[:3])
	}
	_, out := post(t, s, "/v1/chat/completions", ask(""))
	if field(out, "choices", 0, "message", "tool_calls", 0, "function", "arguments") != `{"place":"Rome"}` {
		t.Errorf("python_tag call: %v", out)
	}
	say(s, `{"name": "get_weather", "parameters": {"place": "Rome"}}; {"name": "get_weather", "parameters": {"place": "Oslo"}}`)
	if _, out = post(t, s, "/v1/chat/completions", ask("")); len(asList(field(out, "choices", 0, "message", "tool_calls"))) != 2 {
		t.Errorf("two calls separated by ';': %v", out)
	}
	say(s, "{not json} at all")
	if _, out = post(t, s, "/v1/chat/completions", ask("")); field(out, "choices", 0, "message", "content") != "{not json} at all" {
		t.Errorf("a reply that only starts with '{': %v", out)
	}

	// A template that shows no tools: replies are content.
	s = newServer(t, modelWithTemplate(t), Options{})
	if _, out = post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "tools": `+string(g.Tools)+`, "max_tokens": 4, "temperature": 0}`); field(out, "choices", 0, "finish_reason") != "length" {
		t.Errorf("tools with a template that has none: %v", out)
	}
	if code, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "tools": `+string(g.Tools)+`, "tool_choice": "required"}`); code != 400 || !strings.Contains(field(out, "error", "message").(string), "format") {
		t.Errorf("required without a known format: %d %v", code, out)
	}
}

// TestForcedToolChoice: "required" and a named function start the reply
// with the opening of a call; the model writes the rest.
func TestForcedToolChoice(t *testing.T) {
	g, err := golden()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := toolServer(t, "qwen2.5")
	ask := func(choice string) string {
		return `{"messages": [{"role": "user", "content": "Oslo?"}], "tools": ` + string(g.Tools) + `, "tool_choice": ` + choice + `, "temperature": 0}`
	}
	for _, c := range []struct{ choice, opening, rest string }{
		{`"required"`, "<tool_call>\n{\"name\": \"", "get_weather\", \"arguments\": {\"place\": \"Oslo\"}}\n</tool_call>"},
		{`{"type": "function", "function": {"name": "get_weather"}}`, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ", "{\"place\": \"Oslo\"}}\n</tool_call>"},
	} {
		sc := say(s, c.rest)
		_, out := post(t, s, "/v1/chat/completions", ask(c.choice))
		if p := promptText(s, sc); !strings.HasSuffix(p, "<|im_start|>assistant\n"+c.opening) {
			t.Errorf("tool_choice %s: prompt ends %q", c.choice, p[max(0, len(p)-60):])
		}
		if field(out, "choices", 0, "finish_reason") != "tool_calls" || field(out, "choices", 0, "message", "tool_calls", 0, "function", "arguments") != `{"place":"Oslo"}` {
			t.Errorf("tool_choice %s: %v", c.choice, out)
		}
	}
	if code, out := post(t, s, "/v1/chat/completions", ask(`{"type": "function", "function": {"name": "nope"}}`)); code != 400 || !strings.Contains(field(out, "error", "message").(string), "not among the tools") {
		t.Errorf("a function not offered: %d %v", code, out)
	}
}

// TestForcedCallArguments: a call forced by name has its arguments kept to
// the function's parameters schema — a scripted model that would write a
// number for the string "place" is turned aside — while the call's closing
// after them stays free.
func TestForcedCallArguments(t *testing.T) {
	g, err := golden()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := toolServer(t, "qwen2.5")
	params := parametersOf(g.Tools, "get_weather")
	schema, err := grammar.CompileSchema(params)
	if err != nil {
		t.Fatal(err)
	}
	say(s, `{"place": 5}}`+"\n</tool_call>")
	_, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "Oslo?"}], "tools": `+string(g.Tools)+
		`, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}, "temperature": 0, "max_tokens": 24}`)
	args, _ := field(out, "choices", 0, "message", "tool_calls", 0, "function", "arguments").(string)
	if args == "" {
		content, _ := field(out, "choices", 0, "message", "content").(string)
		_, args, _ = strings.Cut(content, `"arguments": `)
	}
	t.Logf("arguments: %q", args)
	if args == "" || strings.HasPrefix(args, `{"place": 5`) || grammar.NewJSONSchema(schema).Accept(args) != nil {
		t.Errorf("arguments %q do not follow the parameters schema (reply %v)", args, out)
	}
}

// TestXMLToolReplies: Qwen3.5's calls, an element per argument, read back
// with the offered schema's types; a forced call closes the reasoning the
// template opened and starts with the call's opening.
func TestXMLToolReplies(t *testing.T) {
	g, err := golden()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := toolServer(t, "qwen3.5")
	ask := func(extra string) string {
		return `{"messages": [{"role": "user", "content": "Paris and Rome?"}], "tools": ` + string(g.Tools) + `, "temperature": 0` + extra + `}`
	}
	call := func(place, days string) string {
		c := "<tool_call>\n<function=get_weather>\n<parameter=place>\n" + place + "\n</parameter>\n"
		if days != "" {
			c += "<parameter=days>\n" + days + "\n</parameter>\n"
		}
		return c + "</function>\n</tool_call>"
	}
	const think = "Two cities.\n</think>\n\n"
	for _, c := range []struct {
		name, reply string
		content     any
		args        []string // the calls' arguments, compact JSON
	}{
		{"content, then two calls", think + "Looking.\n\n" + call("Paris", "2") + "\n" + call("Rome", ""), "Looking.",
			[]string{`{"place":"Paris","days":2}`, `{"place":"Rome"}`}},
		{"a string that reads as JSON stays a string", think + call("42", "[1, 2]"), nil, []string{`{"place":"42","days":[1,2]}`}},
		{"lines inside a value", think + call("Paris\nTexas", ""), nil, []string{`{"place":"Paris\nTexas"}`}},
		{"no closing tags at the end", think + "<tool_call>\n<function=get_weather>\n<parameter=place>\nOslo\n", nil, []string{`{"place":"Oslo"}`}},
		{"a stray element", think + "<tool_call>\n<function=get_weather>\n<oops>\n</function>\n</tool_call>", "<tool_call>\n<function=get_weather>\n<oops>\n</function>\n</tool_call>", nil},
		{"a function not offered", think + "<tool_call>\n<function=rm_rf>\n</function>\n</tool_call>", "<tool_call>\n<function=rm_rf>\n</function>\n</tool_call>", nil},
	} {
		say(s, c.reply)
		_, out := post(t, s, "/v1/chat/completions", ask(""))
		var args []string
		for _, tc := range asList(field(out, "choices", 0, "message", "tool_calls")) {
			args = append(args, field(tc, "function", "arguments").(string))
		}
		if field(out, "choices", 0, "message", "content") != c.content || !slices.Equal(args, c.args) ||
			field(out, "choices", 0, "message", "reasoning_content") != "Two cities." {
			t.Errorf("%s: %v; want content %q, calls %v", c.name, out, c.content, c.args)
		}
	}

	// Forced: the reasoning the generation prompt opened is closed empty,
	// then the call opens (by name for a named function).
	for _, f := range []struct{ choice, opening, rest string }{
		{`"required"`, "<tool_call>\n<function=", "get_weather>\n<parameter=place>\nOslo\n</parameter>\n</function>\n</tool_call>"},
		{`{"type": "function", "function": {"name": "get_weather"}}`, "<tool_call>\n<function=get_weather>\n", "<parameter=place>\nOslo\n</parameter>\n</function>\n</tool_call>"},
	} {
		sc := say(s, f.rest)
		_, out := post(t, s, "/v1/chat/completions", ask(`, "tool_choice": `+f.choice))
		if p := promptText(s, sc); !strings.HasSuffix(p, "<|im_start|>assistant\n<think>\n\n</think>\n\n"+f.opening) {
			t.Errorf("tool_choice %s: prompt ends %q", f.choice, p[max(0, len(p)-80):])
		}
		if field(out, "choices", 0, "finish_reason") != "tool_calls" || field(out, "choices", 0, "message", "tool_calls", 0, "function", "arguments") != `{"place":"Oslo"}` {
			t.Errorf("tool_choice %s: %v", f.choice, out)
		}
	}
}

// TestGLMToolReplies: GLM-4.5/4.6's calls, the name then key and value
// elements, read back with the offered schema's types; a forced call starts
// the reply with the call's opening (by name for a named function).
func TestGLMToolReplies(t *testing.T) {
	g, err := golden()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := toolServer(t, "glm4.6")
	ask := func(extra string) string {
		return `{"messages": [{"role": "user", "content": "Paris and Rome?"}], "tools": ` + string(g.Tools) + `, "temperature": 0` + extra + `}`
	}
	call := func(place, days string) string {
		c := "<tool_call>get_weather\n<arg_key>place</arg_key>\n<arg_value>" + place + "</arg_value>\n"
		if days != "" {
			c += "<arg_key>days</arg_key>\n<arg_value>" + days + "</arg_value>\n"
		}
		return c + "</tool_call>"
	}
	for _, c := range []struct {
		name, reply string
		content     any
		args        []string // the calls' arguments, compact JSON
	}{
		{"content, then two calls", "Looking.\n" + call("Paris", "2") + call("Rome", ""), "Looking.",
			[]string{`{"place":"Paris","days":2}`, `{"place":"Rome"}`}},
		{"a string that reads as JSON stays a string", call("42", "[1, 2]"), nil, []string{`{"place":"42","days":[1,2]}`}},
		{"no arguments", "<tool_call>get_weather</tool_call>", nil, []string{`{}`}},
		{"no closing tags at the end", "<tool_call>get_weather\n<arg_key>place</arg_key>\n<arg_value>Oslo", nil, []string{`{"place":"Oslo"}`}},
		{"a key without a value", "<tool_call>get_weather\n<arg_key>place</arg_key>\n</tool_call>", "<tool_call>get_weather\n<arg_key>place</arg_key>\n</tool_call>", nil},
		{"a function not offered", "<tool_call>rm_rf\n</tool_call>", "<tool_call>rm_rf\n</tool_call>", nil},
	} {
		say(s, c.reply)
		_, out := post(t, s, "/v1/chat/completions", ask(""))
		var args []string
		for _, tc := range asList(field(out, "choices", 0, "message", "tool_calls")) {
			args = append(args, field(tc, "function", "arguments").(string))
		}
		if field(out, "choices", 0, "message", "content") != c.content || !slices.Equal(args, c.args) {
			t.Errorf("%s: %v; want content %q, calls %v", c.name, out, c.content, c.args)
		}
	}
	for _, f := range []struct{ choice, opening, rest string }{
		{`"required"`, "<tool_call>", "get_weather\n<arg_key>place</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>"},
		{`{"type": "function", "function": {"name": "get_weather"}}`, "<tool_call>get_weather\n", "<arg_key>place</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>"},
	} {
		sc := say(s, f.rest)
		_, out := post(t, s, "/v1/chat/completions", ask(`, "tool_choice": `+f.choice))
		if p := promptText(s, sc); !strings.HasSuffix(p, "<|assistant|>"+f.opening) {
			t.Errorf("tool_choice %s: prompt ends %q", f.choice, p[max(0, len(p)-80):])
		}
		if field(out, "choices", 0, "finish_reason") != "tool_calls" || field(out, "choices", 0, "message", "tool_calls", 0, "function", "arguments") != `{"place":"Oslo"}` {
			t.Errorf("tool_choice %s: %v", f.choice, out)
		}
	}
}
