package serve

import (
	"fmt"
	"strings"
	"testing"
)

// TestRequestBounds: a schema or grammar from a request past grammar's
// bounds is a 400 naming the bound, whichever field carries it.
func TestRequestBounds(t *testing.T) {
	s := newServer(t, modelWithTemplate(t), Options{})
	var nested strings.Builder
	for nested.Len() < 100_000 {
		nested.WriteString(`{"type": "object", "properties": {"a": `)
	}
	depth := strings.Count(nested.String(), "{") / 2
	nested.WriteString(`{"type": "string"}` + strings.Repeat("}}", depth))
	deep := strings.Repeat(`{"type": "array", "items": `, 80) + `{"type": "string"}` + strings.Repeat("}", 80)
	vals := make([]string, 60000)
	for i := range vals {
		vals[i] = fmt.Sprintf(`"value-%d"`, i)
	}
	enum := `{"enum": [` + strings.Join(vals, ",") + `]}`
	msgs := `"messages": [{"role": "user", "content": "x"}], "max_tokens": 2`
	for _, c := range []struct{ path, body, bound string }{
		{"/v1/chat/completions", `{` + msgs + `, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": ` + nested.String() + `}}}`, "MaxSchemaBytes"},
		{"/v1/chat/completions", `{` + msgs + `, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": ` + enum + `}}}`, "MaxSchemaBytes"},
		{"/v1/chat/completions", `{` + msgs + `, "response_format": {"type": "json_object", "schema": ` + deep + `}}`, "MaxSchemaDepth"},
		{"/v1/completions", `{"prompt": "x", "max_tokens": 2, "json_schema": ` + nested.String() + `}`, "MaxSchemaBytes"},
		{"/v1/completions", `{"prompt": "x", "max_tokens": 2, "grammar": "root ::= \"` + strings.Repeat("a", 1<<20) + `\""}`, "MaxGrammarBytes"},
		{"/api/chat", `{"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": false, "format": ` + nested.String() + `}`, "MaxSchemaBytes"},
	} {
		code, out := post(t, s, c.path, c.body)
		msg, _ := field(out, "error", "message").(string)
		if strings.HasPrefix(c.path, "/api/") {
			msg, _ = out["error"].(string)
		}
		if code != 400 || !strings.Contains(msg, c.bound) {
			t.Errorf("%s, %d bytes: %d %.200q, want a 400 naming %s", c.path, len(c.body), code, msg, c.bound)
		}
	}
	// A forced call's parameters schema is compiled too.
	ts, _ := toolServer(t, "qwen2.5")
	code, out := post(t, ts, "/v1/chat/completions", `{`+msgs+`, "tool_choice": "required", "tools": [{"type": "function", "function": {"name": "f", "parameters": `+deep+`}}]}`)
	if msg, _ := field(out, "error", "message").(string); code != 400 || !strings.Contains(msg, "MaxSchemaDepth") {
		t.Errorf("a forced call to a function of a deep schema: %d %v", code, out)
	}
}
