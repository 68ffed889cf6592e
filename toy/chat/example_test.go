package chat_test

import (
	"fmt"

	"github.com/toyml/toy/toy/chat"
)

// Gemma 2's template: the model's turn is called "model", and a system
// message is refused with the template's own error.
func ExampleTemplate_Render() {
	t := chat.MustParse("{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}" +
		"{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}" +
		"{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}" +
		"{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}")
	opts := chat.Options{AddGenerationPrompt: true, BOS: "<bos>"}
	prompt, _ := t.Render([]chat.Message{{Role: "user", Content: " Hi! "}}, opts)
	fmt.Printf("%q\n", prompt)
	_, err := t.Render([]chat.Message{{Role: "system", Content: "Be brief."}}, opts)
	fmt.Println(err)
	// Output:
	// "<bos><start_of_turn>user\nHi!<end_of_turn>\n<start_of_turn>model\n"
	// chat template: System role not supported
}
