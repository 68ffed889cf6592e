// Package chat turns a conversation into the prompt text an instruct model
// was trained on, with the model's own chat template: the Jinja2 program
// that Hugging Face's tokenizer_config.json carries as chat_template and a
// GGUF file as tokenizer.chat_template.
//
//	t, err := chat.Parse(source)
//	prompt, err := t.Render([]chat.Message{{Role: "user", Content: "Hi"}},
//		chat.Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>"})
//
// The interpreter covers the Jinja2 that chat templates use, with the
// settings transformers' apply_chat_template uses (trim_blocks, lstrip_blocks,
// a sandbox in which lists and dicts cannot be changed), and renders what
// Python's Jinja2 renders (tests/chat/render_jinja2.py makes the goldens):
// text, {{ expr }}, {% if/elif/else %}, {% for x in xs [if cond] %} with
// loop.index0, first, last, length, previtem, nextitem, cycle, changed …,
// {% set %} (also ns.attr and block sets), {% macro %} (varargs, kwargs),
// {% break %}/{% continue %}, {% filter %}, {% raw %}, transformers'
// {% generation %}, comments and the "-"/"+" whitespace control; literals,
// lists, tuples, dicts (number keys too), attribute and item access (x.name
// a dict's method before its key, as Jinja2), slices (messages[1:],
// s[::-1]), calls with keyword arguments, the operators and/or/not,
// == != < <= > >=, in/not in, + - * / // % ** (with printf-style s % args),
// ~, a if c else b; the filters trim, length, upper, lower, title,
// capitalize, tojson (transformers': ensure_ascii, indent, separators,
// sort_keys), items, dictsort, sort, join, default, first, last, min, max,
// sum, round, replace, select/reject(attr), map, unique, reverse, batch,
// slice, string, int, float, abs, list, indent, center, truncate, wordcount,
// format, pprint, safe (markupsafe's Markup: adding a string to it escapes
// the string), escape, forceescape; Jinja2's Undefined (it prints, iterates
// and measures as empty; its attributes are errors) and its iterators (map,
// select, reject, unique, reverse, batch and slice give one: a loop, join or
// list consumes it, tojson and length refuse it); the tests defined, none,
// string, number, mapping, iterable, equalto …; Python's string methods
// (strip, split, rsplit, replace, startswith, format, partition, zfill …),
// dict methods get, items, keys, values; and the globals raise_exception,
// namespace, range, dict and strftime_now.
//
// Not covered: {% include %}, {% extends %}, {% call %}, integers past 64
// bits, and the HTML filters (urlencode, striptags, xmlattr …). Tool calling
// is what the template renders from the tools a caller passes in
// Options.Vars and the messages' ToolCalls, ToolCallID and Name; reading the
// calls back out of a reply is the caller's (package serve does it).
//
// # Error Handling
//
// Parse returns errors wrapping ErrSyntax with the line; Render returns
// errors wrapping ErrRender, or a *TemplateError when the template itself
// refused the conversation with raise_exception (Gemma's "System role not
// supported"). A model without a template gets ErrNoTemplate from
// toy's Model.ChatTemplate; Plain is the fallback a server may use instead.
package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors a caller can test for with errors.Is.
var (
	ErrSyntax     = errors.New("chat template syntax error")
	ErrRender     = errors.New("chat template error")
	ErrNoTemplate = errors.New("model has no chat template")
)

// TemplateError is the error a template raised with raise_exception: the
// conversation is one the model's template does not accept.
type TemplateError struct{ Message string }

func (e *TemplateError) Error() string { return "chat template: " + e.Message }

// Is makes a TemplateError match ErrRender too.
func (e *TemplateError) Is(target error) bool { return target == ErrRender }

// Message is one turn of a conversation. The tool-calling fields are
// OpenAI's and transformers': an assistant message's ToolCalls, and a "tool"
// message's ToolCallID (the call it answers) and Name (the function's). A
// template sees each of them only when it is set, as
// message.tool_calls[i].function.name and .arguments, message.tool_call_id,
// message.name: Llama 3.1's template tests 'tool_calls' in message.
type Message struct {
	Role    string `json:"role"` // "system", "user", "assistant" or "tool"
	Content string `json:"content"`
	// ReasoningContent is an assistant message's thinking, apart from its
	// content, as reasoning models' templates read it (Qwen3, DeepSeek,
	// GLM, Kimi: message.reasoning_content).
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
}

// ToolCall is one function call an assistant message made.
type ToolCall struct {
	ID       string       `json:"id,omitempty"`   // "" leaves tool_call.id undefined (Mistral's template requires 9 letters or digits)
	Type     string       `json:"type,omitempty"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and holds its arguments as JSON. The
// templates expect an object (transformers' convention: Qwen2.5 and Llama 3.1
// write tool_call.arguments|tojson); OpenAI's wire format carries a string
// holding the object, which a server should decode before rendering.
type FunctionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Options are the variables a chat template reads besides the messages.
type Options struct {
	AddGenerationPrompt bool   // end with the opening of the assistant's turn
	BOS, EOS            string // the model's bos_token and eos_token text ("" leaves them undefined)
	// Vars holds more variables (tools, enable_thinking, date_string …), as
	// template values: string, bool, int, float64, []any, *Dict, nil.
	Vars map[string]any
	// Now is the clock strftime_now reads; nil is time.Now.
	Now func() time.Time
}

// Template is a parsed chat template. It is safe for concurrent use.
type Template struct {
	source string
	root   []node
}

// Parse parses a chat template's source.
func Parse(source string) (*Template, error) {
	// Jinja2's lexer first writes every line break as "\n" and drops one
	// at the very end (keep_trailing_newline is off).
	src := strings.ReplaceAll(strings.ReplaceAll(source, "\r\n", "\n"), "\r", "\n")
	src = strings.TrimSuffix(src, "\n")
	items, err := lex(src)
	if err != nil {
		return nil, err
	}
	root, err := parseTemplate(items)
	if err != nil {
		return nil, err
	}
	return &Template{source: source, root: root}, nil
}

// MustParse is Parse for templates known to be valid; it panics on error.
func MustParse(source string) *Template {
	t, err := Parse(source)
	if err != nil {
		panic(err)
	}
	return t
}

// Source returns the template's text.
func (t *Template) Source() string { return t.source }

// Render returns the prompt for messages: the template run with messages,
// add_generation_prompt, bos_token, eos_token and opts.Vars.
func (t *Template) Render(messages []Message, opts Options) (string, error) {
	msgs := make([]any, len(messages))
	for i, m := range messages {
		d, err := m.value()
		if err != nil {
			return "", fmt.Errorf("%w: messages[%d]: %v", ErrRender, i, err)
		}
		msgs[i] = d
	}
	vars := map[string]any{}
	for k, v := range opts.Vars {
		vars[k] = v
	}
	vars["messages"] = msgs
	vars["add_generation_prompt"] = opts.AddGenerationPrompt
	if opts.BOS != "" {
		vars["bos_token"] = opts.BOS
	}
	if opts.EOS != "" {
		vars["eos_token"] = opts.EOS
	}
	return t.Execute(vars, opts.Now)
}

// value is the message as the template sees it: role and content, then the
// tool-calling keys that are set, in the order OpenAI's JSON has them.
func (m Message) value() (*Dict, error) {
	d := NewDict().Set("role", m.Role).Set("content", m.Content)
	if m.ReasoningContent != "" {
		d.Set("reasoning_content", m.ReasoningContent)
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]any, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			var args any = NewDict()
			if len(c.Function.Arguments) > 0 {
				var err error
				if args, err = FromJSON(c.Function.Arguments); err != nil {
					return nil, fmt.Errorf("tool_calls[%d].function.arguments: %v", i, err)
				}
			}
			call := NewDict()
			if c.ID != "" {
				call.Set("id", c.ID)
			}
			if c.Type != "" {
				call.Set("type", c.Type)
			}
			calls[i] = call.Set("function", NewDict().Set("name", c.Function.Name).Set("arguments", args))
		}
		d.Set("tool_calls", calls)
	}
	if m.ToolCallID != "" {
		d.Set("tool_call_id", m.ToolCallID)
	}
	if m.Name != "" {
		d.Set("name", m.Name)
	}
	return d, nil
}

// Execute runs the template with the given variables (template values, see
// Options.Vars) and returns its output.
func (t *Template) Execute(vars map[string]any, now func() time.Time) (string, error) {
	if now == nil {
		now = time.Now
	}
	sc := (&scope{vars: globals(now), work: &work{}}).child()
	for k, v := range vars {
		sc.vars[k] = v
	}
	var out strings.Builder
	if err := execute(t.root, sc, &out); err != nil {
		var te *TemplateError
		if errors.As(err, &te) {
			return "", te
		}
		return "", fmt.Errorf("%w: %v", ErrRender, err)
	}
	return out.String(), nil
}

// Plain is the fallback for a model without a chat template: each message's
// content on its own line, roles left out, so that a base model simply
// continues the text.
func Plain(messages []Message) string {
	var b strings.Builder
	for i, m := range messages {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(m.Content)
	}
	return b.String()
}
