// chat.go: conversations → prompts with the model's own chat template.

package toy

import (
	"fmt"
	"strings"

	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/tokenizer"
)

// ChatTemplate returns the model's chat template, the Jinja2 program its
// GGUF file carries as tokenizer.chat_template; chat.ErrNoTemplate when it
// has none (base models, toy's own default model).
func (m *Model) ChatTemplate() (*chat.Template, error) {
	src, err := m.File.String("tokenizer.chat_template")
	if err != nil || src == "" {
		return nil, fmt.Errorf("%s: %w", m.Path, chat.ErrNoTemplate)
	}
	t, err := chat.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: tokenizer.chat_template: %w", m.Path, err)
	}
	return t, nil
}

// ChatOptions returns the template options for this model: its BOS and EOS
// token texts, and add_generation_prompt.
func (m *Model) ChatOptions(addGenerationPrompt bool) chat.Options {
	opts := chat.Options{AddGenerationPrompt: addGenerationPrompt}
	if t := m.Tokenizer; t != nil {
		if t.BOS() >= 0 {
			opts.BOS = t.Token(t.BOS())
		}
		if t.EOS() >= 0 {
			opts.EOS = t.Token(t.EOS())
		}
	}
	return opts
}

// EncodeChat renders messages with tmpl (the model's template, from
// ChatTemplate; nil for chat.Plain) and encodes the prompt, special tokens
// in it ("<|im_start|>") parsed as such. When the tokenizer adds BOS itself,
// a BOS the template wrote at the start is dropped, so there is one, as in
// llama.cpp.
func (m *Model) EncodeChat(tmpl *chat.Template, messages []chat.Message, opts chat.Options) ([]int32, error) {
	t, err := m.tok()
	if err != nil {
		return nil, err
	}
	text := chat.Plain(messages)
	if tmpl != nil {
		if text, err = tmpl.Render(messages, opts); err != nil {
			return nil, err
		}
	}
	if t.AddBOS() && opts.BOS != "" {
		text = strings.TrimPrefix(text, opts.BOS)
	}
	return t.Encode(text, tokenizer.EncodeOptions{AddBOS: t.AddBOS(), ParseSpecial: true}), nil
}
