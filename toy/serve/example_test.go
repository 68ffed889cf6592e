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
