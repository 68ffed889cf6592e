package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// golden is testdata/golden.json, written by tests/chat/render.mjs with
// @huggingface/jinja (and checked against Python's Jinja2 by
// tests/chat/check_jinja2.py).
type golden struct {
	Conversations map[string][]Message `json:"conversations"`
	Tools         json.RawMessage      `json:"tools"`
	DateString    string               `json:"date_string"`
	Cases         []struct {
		Template            string  `json:"template"`
		Conversation        string  `json:"conversation"`
		AddGenerationPrompt bool    `json:"add_generation_prompt"`
		Tools               bool    `json:"tools"`
		BOS                 *string `json:"bos_token"`
		EOS                 *string `json:"eos_token"`
		Output              *string `json:"output"`
		Error               *string `json:"error"`
	} `json:"cases"`
}

// TestGolden renders the chat templates of the model families toy runs
// (testdata/templates, as their GGUF files carry them) over a set of
// conversations and requires Hugging Face's output byte for byte, or the
// same raise_exception message.
func TestGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	tools, err := FromJSON(g.Tools)
	if err != nil {
		t.Fatal(err)
	}
	templates := map[string]*Template{}
	pass := 0
	for _, c := range g.Cases {
		tmpl := templates[c.Template]
		if tmpl == nil {
			src, err := os.ReadFile(filepath.Join("testdata/templates", c.Template+".jinja"))
			if err != nil {
				t.Fatal(err)
			}
			if tmpl, err = Parse(string(src)); err != nil {
				t.Fatalf("%s: %v", c.Template, err)
			}
			templates[c.Template] = tmpl
		}
		opts := Options{AddGenerationPrompt: c.AddGenerationPrompt, Vars: map[string]any{"date_string": g.DateString},
			Now: func() time.Time { return time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC) }} // the golden's clock (gpt-oss prints the date)
		if c.BOS != nil {
			opts.BOS = *c.BOS
		}
		if c.EOS != nil {
			opts.EOS = *c.EOS
		}
		if c.Tools {
			opts.Vars["tools"] = tools
		}
		name := c.Template + "/" + c.Conversation
		if !c.AddGenerationPrompt {
			name += "/no-generation-prompt"
		}
		if c.Tools {
			name += "/tools"
		}
		got, err := tmpl.Render(g.Conversations[c.Conversation], opts)
		switch {
		case c.Error != nil:
			var te *TemplateError
			if !errors.As(err, &te) || te.Message != *c.Error {
				t.Errorf("%s: got %q, %v; want the template's error %q", name, got, err, *c.Error)
				continue
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
			continue
		case got != *c.Output:
			t.Errorf("%s:\n got %q\nwant %q", name, got, *c.Output)
			continue
		}
		pass++
	}
	t.Logf("%d of %d cases identical to Hugging Face's, over %d templates", pass, len(g.Cases), len(templates))
	if len(templates) < 11 || !strings.Contains(string(b), "qwen3") {
		t.Errorf("golden covers %d templates, want the 11 families", len(templates))
	}
}
