package chat

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Hostile templates (GGUF metadata is untrusted input) fail with an error,
// and quickly: loops nested past the statement budget, a macro that calls
// itself, a string repeated past the output bound.
func TestHostileTemplates(t *testing.T) {
	for _, src := range []string{
		"{% for i in range(1048576) %}{% for j in range(1048576) %}{% endfor %}{% endfor %}",
		"{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
		"{{ 'ab' * 1000000000 }}",
		"{% for i in range(1048576) %}{{ 'x' * 100 }}{% endfor %}",
	} {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		start := time.Now()
		if _, err := tmpl.Render(nil, Options{}); err == nil {
			t.Errorf("%s: rendered without an error", src)
		}
		t.Logf("%s: refused after %v", src, time.Since(start))
	}
}

// FuzzTemplate: any template text parses or fails with an error, and a
// parsed one renders a conversation or fails with one — never a panic.
//
//	go test -fuzz=FuzzTemplate ./toy/chat
func FuzzTemplate(f *testing.F) {
	files, _ := filepath.Glob("testdata/templates/*.jinja")
	more, _ := filepath.Glob("testdata/jinja2/templates/*.jinja")
	files = append(files, more...)
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("{% for m in messages %}{{ m['role'] ~ ': ' ~ m.content | trim }}{% endfor %}")
	msgs := []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}, {Role: "assistant", Content: "Hello."},
		{Role: "user", Content: "Bye"}}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Parse(src)
		if err != nil {
			return
		}
		tmpl.Render(msgs, Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>"})
	})
}
