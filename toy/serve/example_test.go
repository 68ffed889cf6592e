package serve_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/serve"
)

// A server over toy's default model, asked for 8 greedy tokens. toy serve
// does the same on a real address; any OpenAI client can then talk to it.
func ExampleServer() {
	m, err := toy.LoadDefault()
	if err != nil {
		panic(err)
	}
	s, err := serve.New(m, serve.Options{})
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	body := `{"prompt": "func (b *Buffer) Len() int {", "max_tokens": 8, "temperature": 0}`
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/completions", strings.NewReader(body)))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"finish_reason":"length"`))
	// Output:
	// 200 true
}

// The same server answers Ollama's API: /api/generate with "raw" sends the
// prompt as it is, and "stream": false gives one JSON object instead of a
// stream of lines.
func ExampleServer_ollama() {
	m, err := toy.LoadDefault()
	if err != nil {
		panic(err)
	}
	s, err := serve.New(m, serve.Options{})
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	body := `{"model": "toy-go", "prompt": "func (b *Buffer) Len() int {", "raw": true, "stream": false,
		"options": {"temperature": 0, "num_predict": 8}}`
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/api/generate", strings.NewReader(body)))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"done_reason":"length","total_duration":`))
	// Output:
	// 200 true
}
