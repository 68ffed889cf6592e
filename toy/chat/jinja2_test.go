package chat

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// jinja2Golden is testdata/jinja2/golden.json.gz, written by
// tests/chat/render_jinja2.py with Python's Jinja2 set up as transformers'
// apply_chat_template sets it up.
type jinja2Golden struct {
	Conversations map[string]json.RawMessage `json:"conversations"`
	Tools         json.RawMessage            `json:"tools"`
	Cases         []struct {
		Template            string  `json:"template"`
		Conversation        string  `json:"conversation"`
		AddGenerationPrompt bool    `json:"add_generation_prompt"`
		Tools               bool    `json:"tools"`
		EnableThinking      *bool   `json:"enable_thinking"`
		BOS                 string  `json:"bos_token"`
		EOS                 string  `json:"eos_token"`
		Output              *string `json:"output"`
		Raised              *string `json:"raised"` // raise_exception's message
		Error               *string `json:"error"`  // Jinja2's own error: toy must fail too
		SyntaxError         *string `json:"syntax_error"`
	} `json:"cases"`
	Snippets []struct {
		Source string  `json:"source"`
		Output *string `json:"output"`
		Raised *string `json:"raised"`
		Error  *string `json:"error"`
	} `json:"snippets"`
}

func readJinja2Golden(t *testing.T) jinja2Golden {
	t.Helper()
	f, err := os.Open("testdata/jinja2/golden.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var g jinja2Golden
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestJinja2 renders current models' chat templates (testdata/jinja2/templates,
// as llama.cpp's models/templates/ carries them) over conversations with
// system prompts, several turns, tools, tool calls and results, and reasoning,
// with and without the generation prompt, and requires Python Jinja2's output
// byte for byte; where Jinja2 refused (raise_exception, or its own error),
// toy must refuse too.
func TestJinja2(t *testing.T) {
	g := readJinja2Golden(t)
	tools, err := FromJSON(g.Tools)
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC) }
	templates := map[string]*Template{}
	parseErrs := map[string]error{}
	pass := 0
	for _, c := range g.Cases {
		if c.SyntaxError != nil {
			if _, err := Parse(readTemplate(t, c.Template)); err == nil {
				t.Errorf("%s: parsed; Jinja2 refuses it: %s", c.Template, *c.SyntaxError)
				continue
			}
			pass++
			continue
		}
		tmpl, perr := templates[c.Template], parseErrs[c.Template]
		if tmpl == nil && perr == nil {
			tmpl, perr = Parse(readTemplate(t, c.Template))
			templates[c.Template], parseErrs[c.Template] = tmpl, perr
		}
		name := c.Template + "/" + c.Conversation
		if !c.AddGenerationPrompt {
			name += "/no-generation-prompt"
		}
		if c.Tools {
			name += "/tools"
		}
		if c.EnableThinking != nil {
			name += "/thinking-off"
		}
		if perr != nil {
			t.Errorf("%s: %v", name, perr)
			continue
		}
		msgs, err := FromJSON(g.Conversations[c.Conversation])
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]any{"messages": msgs, "add_generation_prompt": c.AddGenerationPrompt,
			"bos_token": c.BOS, "eos_token": c.EOS}
		if c.Tools {
			vars["tools"] = tools
		}
		if c.EnableThinking != nil {
			vars["enable_thinking"] = *c.EnableThinking
		}
		got, err := tmpl.Execute(vars, now)
		var te *TemplateError
		switch {
		case c.Raised != nil:
			if !errors.As(err, &te) || te.Message != *c.Raised {
				t.Errorf("%s: got %q, %v; want the template's error %q", name, got, err, *c.Raised)
				continue
			}
		case c.Error != nil:
			if err == nil {
				t.Errorf("%s: rendered %q; Jinja2 fails: %s", name, got, *c.Error)
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
	t.Logf("%d of %d cases as Jinja2 renders them, over %d templates", pass, len(g.Cases), len(templates))
	if len(templates) < 50 {
		t.Errorf("golden covers %d templates, want 50 or more", len(templates))
	}
}

// TestJinja2Snippets runs the one-line templates of tests/chat/snippets.txt
// (Jinja2's semantics one at a time: undefined values, filters, tests,
// methods, loop variables, whitespace control) with messages and tools, and
// requires Jinja2's output, its raise_exception message, or an error where
// Jinja2 fails.
func TestJinja2Snippets(t *testing.T) {
	g := readJinja2Golden(t)
	msgs, err := FromJSON(g.Conversations["tool-call"])
	if err != nil {
		t.Fatal(err)
	}
	tools, err := FromJSON(g.Tools)
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC) }
	pass := 0
	for _, c := range g.Snippets {
		tmpl, err := Parse(c.Source)
		var got string
		if err == nil {
			got, err = tmpl.Execute(map[string]any{"messages": msgs, "tools": tools}, now)
		}
		var te *TemplateError
		switch {
		case c.Raised != nil:
			if !errors.As(err, &te) || te.Message != *c.Raised {
				t.Errorf("%q: got %q, %v; want the template's error %q", c.Source, got, err, *c.Raised)
				continue
			}
		case c.Error != nil:
			if err == nil {
				t.Errorf("%q: rendered %q; Jinja2 fails: %s", c.Source, got, *c.Error)
				continue
			}
		case err != nil:
			t.Errorf("%q: %v; want %q", c.Source, err, *c.Output)
			continue
		case got != *c.Output:
			t.Errorf("%q:\n got %q\nwant %q", c.Source, got, *c.Output)
			continue
		}
		pass++
	}
	t.Logf("%d of %d snippets as Jinja2 renders them", pass, len(g.Snippets))
	if len(g.Snippets) < 50 {
		t.Errorf("golden has %d snippets, want 50 or more", len(g.Snippets))
	}
}

// TestJinja2Messages renders the same cases through Render, the messages as
// []Message (ReasoningContent, ToolCalls, ToolCallID, Name), for the
// conversations a Message can hold (not content as a list of parts, not a
// null content): what the template sees must be what transformers passes.
func TestJinja2Messages(t *testing.T) {
	g := readJinja2Golden(t)
	tools, err := FromJSON(g.Tools)
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC) }
	templates := map[string]*Template{}
	pass, n := 0, 0
	for _, c := range g.Cases {
		if c.SyntaxError != nil || c.Conversation == "content-parts" || c.Conversation == "tool-call-string-args" {
			continue
		}
		var msgs []Message
		if err := json.Unmarshal(g.Conversations[c.Conversation], &msgs); err != nil {
			t.Fatal(err)
		}
		tmpl := templates[c.Template]
		if tmpl == nil {
			if tmpl, err = Parse(readTemplate(t, c.Template)); err != nil {
				t.Fatal(err)
			}
			templates[c.Template] = tmpl
		}
		// bos_token "" is defined (and empty) in the golden: pass it as a variable.
		opts := Options{AddGenerationPrompt: c.AddGenerationPrompt, Now: now,
			Vars: map[string]any{"bos_token": c.BOS, "eos_token": c.EOS}}
		if c.Tools {
			opts.Vars["tools"] = tools
		}
		if c.EnableThinking != nil {
			opts.Vars["enable_thinking"] = *c.EnableThinking
		}
		n++
		got, err := tmpl.Render(msgs, opts)
		name := c.Template + "/" + c.Conversation
		var te *TemplateError
		switch {
		case c.Raised != nil:
			if !errors.As(err, &te) || te.Message != *c.Raised {
				t.Errorf("%s: got %q, %v; want the template's error %q", name, got, err, *c.Raised)
				continue
			}
		case c.Error != nil:
			if err == nil {
				t.Errorf("%s: rendered %q; Jinja2 fails: %s", name, got, *c.Error)
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
	t.Logf("%d of %d cases rendered from []Message as Jinja2 renders them", pass, n)
}

func readTemplate(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/jinja2/templates", name+".jinja"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
