// Command chat shows a conversation rendered through a chat template
// (package chat), the model's reply generated, and the reply added to the
// history for the next turn.
//
//	go run ./examples/chat
//
// An instruct model's GGUF file carries its own template (Model.ChatTemplate).
// toy-go, the default model, is a base model trained on Go source and has
// none, so this program falls back to ChatML, a widely used template written
// out below (toy/chat has no library of named templates; any Jinja2 template
// works). toy-go was never taught to chat: expect Go-looking replies.
package main

import (
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
)

// chatML is the ChatML template (Qwen, SmolLM2 and many others use it).
const chatML = `{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}` +
	`{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`

func main() {
	m, err := toy.LoadDefault()
	check(err)
	defer m.Close()

	tmpl, err := m.ChatTemplate()
	if errors.Is(err, chat.ErrNoTemplate) {
		fmt.Println("the model has no chat template; using ChatML")
		tmpl, err = chat.Parse(chatML)
	}
	check(err)

	var history []chat.Message
	for _, question := range []string{"Add two ints.", "Now in Go."} {
		history = append(history, chat.Message{Role: "user", Content: question})

		// Render the conversation as the prompt text the template makes,
		// ending with the opening of the assistant's turn.
		opts := m.ChatOptions(true)
		prompt, err := tmpl.Render(history, opts)
		check(err)
		fmt.Printf("--- prompt ---\n%s", prompt)

		// EncodeChat renders and tokenizes in one step.
		ids, err := m.EncodeChat(tmpl, history, opts)
		check(err)
		// toy-go's context is only 128 tokens: prompt and reply share it.
		n := min(20, m.ContextLength()-len(ids))
		fmt.Printf("(%d prompt tokens, room for %d more)\n", len(ids), n)
		out, err := m.Generate(ids, toy.GenerateOptions{MaxTokens: n, Stop: m.Tokenizer.IsEOG})
		check(err)
		reply, err := m.Decode(out)
		check(err)
		// A model trained on ChatML ends its turn with <|im_end|>.
		reply, _, _ = strings.Cut(reply, "<|im_end|>")
		fmt.Printf("--- reply ---\n%s\n\n", reply)

		history = append(history, chat.Message{Role: "assistant", Content: reply})
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
