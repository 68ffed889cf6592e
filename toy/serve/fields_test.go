package serve

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toyml/toy/toy/sample"
)

// TestClientFields: the fields OpenAI's, llama-server's and vLLM's clients
// send are accepted where they change nothing toy sends back.
func TestClientFields(t *testing.T) {
	s := newTemplateServer(t, chatML)
	say(s, "hi")
	chat := `{"messages": [{"role": "user", "content": "x"}], "max_tokens": 4, "temperature": 0, "store": false,
		"metadata": {"team": "a"}, "service_tier": "auto", "user": "u1", "safety_identifier": "s", "prompt_cache_key": "k",
		"parallel_tool_calls": true, "prediction": {"type": "content", "content": "hi"}, "verbosity": "low",
		"modalities": ["text"], "audio": null, "web_search_options": null, "reasoning_effort": "low",
		"max_completion_tokens": 8, "logit_bias": {"5": 1}, "stream_options": null,
		"n_predict": 8, "cache_prompt": true, "id_slot": -1, "n_keep": 0, "n_probs": 0, "samplers": null,
		"dynatemp_range": 0, "dynatemp_exponent": 1, "typical_p": 1, "tfs_z": 1, "mirostat": 0, "mirostat_tau": 5,
		"mirostat_eta": 0.1, "top_n_sigma": -1, "xtc_probability": 0, "xtc_threshold": 0.1, "dry_multiplier": 0,
		"dry_base": 1.75, "dry_allowed_length": 2, "dry_penalty_last_n": -1, "dry_sequence_breakers": ["\n"],
		"return_tokens": false, "t_max_predict_ms": 0, "include_stop_str_in_output": false, "skip_special_tokens": true,
		"spaces_between_special_tokens": true, "best_of": 1, "use_beam_search": false, "min_keep": 0,
		"penalize_nl": false, "timings_per_token": false, "ignore_eos": false, "min_tokens": 0, "priority": 0}`
	if code, out := post(t, s, "/v1/chat/completions", chat); code != 200 || field(out, "choices", 0, "message", "content") != "hi" {
		t.Errorf("chat with the clients' fields: %d %v", code, out)
	}
	say(s, "hi")
	stream := `{"messages": [{"role": "user", "content": "x"}], "stream": true, "stream_options": {"include_usage": true, "include_obfuscation": false}}`
	if code := postStatus(t, s, "/v1/chat/completions", stream); code != 200 {
		t.Errorf("stream_options.include_obfuscation: %d", code)
	}
	say(s, "hi")
	completion := `{"prompt": "x", "max_tokens": 4, "temperature": 0, "user": "u", "best_of": 1, "n_predict": 4,
		"cache_prompt": false, "repetition_penalty": 1, "stop_token_ids": [], "stream_options": {"include_obfuscation": true}}`
	if code, out := post(t, s, "/v1/completions", completion); code != 200 || field(out, "choices", 0, "text") != "hi" {
		t.Errorf("completion with the clients' fields: %d %v", code, out)
	}
}

// postStatus posts body and returns the status alone (a stream's body is
// not one JSON value).
func postStatus(t *testing.T, s *Server, path, body string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	s.ServeHTTP(rec, req)
	return rec.Code
}

// TestRefusedFields: a field that would change the reply in a way toy
// cannot honour is a 400 naming it and why, unless it is off.
func TestRefusedFields(t *testing.T) {
	s := newTemplateServer(t, chatML)
	for _, c := range []struct{ body, param, why string }{
		{`"mirostat": 2`, "mirostat", "Mirostat"},
		{`"typical_p": 0.9`, "typical_p", "typical"},
		{`"tfs_z": 0.5`, "tfs_z", "tail-free"},
		{`"dynatemp_range": 0.5`, "dynatemp_range", "dynamic temperature"},
		{`"top_n_sigma": 1`, "top_n_sigma", "top-nσ"},
		{`"xtc_probability": 0.5, "xtc_threshold": 0.1`, "xtc_probability", "XTC"},
		{`"dry_multiplier": 0.8`, "dry_multiplier", "DRY"},
		{`"samplers": ["top_k", "temperature"]`, "samplers", "order"},
		{`"n_probs": 3`, "n_probs", "logprobs"},
		{`"best_of": 3`, "best_of", "n"},
		{`"use_beam_search": true`, "use_beam_search", "beam"},
		{`"skip_special_tokens": false`, "skip_special_tokens", "special"},
		{`"stop_token_ids": [5]`, "stop_token_ids", "stop strings"},
		{`"n_predict": -3`, "n_predict", "-1"},
		{`"min_tokens": -1`, "min_tokens", "≥ 0"},
		{`"repetition_penalty": 0`, "repetition_penalty", "> 0"},
		{`"repetition_penalty": 1.1, "repeat_penalty": 1.1`, "repetition_penalty", "give one"},
		{`"modalities": ["text", "audio"]`, "modalities", "audio"},
		{`"audio": {"voice": "alloy", "format": "mp3"}`, "audio", "audio"},
		{`"web_search_options": {}`, "web_search_options", "search"},
		{`"verbosity": "loud"`, "verbosity", "low"},
		{`"functions": [{"name": "f"}]`, "functions", "tools"},
	} {
		body := `{"messages": [{"role": "user", "content": "x"}], ` + c.body + `}`
		code, out := post(t, s, "/v1/chat/completions", body)
		msg, _ := field(out, "error", "message").(string)
		if code != 400 || field(out, "error", "param") != c.param || !strings.Contains(msg, c.why) {
			t.Errorf("%s: %d %v, want a 400 on %s saying %q", c.body, code, out, c.param, c.why)
		}
	}
}

// TestMisspelledFields: an unknown field stays a 400; one within an edit
// distance of 2 of a known one (ignoring case) names that one.
func TestMisspelledFields(t *testing.T) {
	s := newTemplateServer(t, chatML)
	for _, c := range []struct{ path, body, field, near string }{
		{"/v1/chat/completions", `{"messages": [], "max_token": 5}`, "max_token", "max_tokens"},
		{"/v1/chat/completions", `{"messages": [], "Temprature": 0}`, "Temprature", "temperature"},
		{"/v1/chat/completions", `{"messages": [], "ignore_eso": true}`, "ignore_eso", "ignore_eos"},
		{"/v1/completions", `{"prompt": "x", "repetition_penalti": 1}`, "repetition_penalti", "repetition_penalty"},
		{"/v1/completions", `{"prompt": "x", "Min_Tokenz": 1}`, "Min_Tokenz", "min_tokens"},
		{"/v1/chat/completions", `{"messages": [], "frobnicate": 1}`, "frobnicate", ""},
		{"/api/chat", `{"model": "m", "messages": [], "options": {"num_predicts": 3}}`, "num_predicts", "num_predict"},
	} {
		code, out := post(t, s, c.path, c.body)
		msg, _ := field(out, "error", "message").(string)
		if strings.HasPrefix(c.path, "/api/") {
			msg, _ = out["error"].(string)
		}
		ok := code == 400 && strings.Contains(msg, `unknown field "`+c.field+`"`)
		if c.near != "" {
			ok = ok && strings.Contains(msg, `did you mean "`+c.near+`"`)
		} else {
			ok = ok && !strings.Contains(msg, "did you mean")
		}
		if !ok {
			t.Errorf("%s %s: %d %q", c.path, c.body, code, msg)
		}
	}
	if d := editDistance("temprature", "temperature"); d != 1 {
		t.Errorf("editDistance(temprature, temperature) = %d", d)
	}
}

// TestImplementedFields: ignore_eos, min_tokens, n_predict and
// include_stop_str_in_output change the reply of a model that ends after
// "hi" (a scripted one).
func TestImplementedFields(t *testing.T) {
	s := newTemplateServer(t, chatML)
	ask := func(reply, extra string) map[string]any {
		t.Helper()
		say(s, reply)
		code, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "temperature": 0, `+extra+`}`)
		if code != 200 {
			t.Fatalf("%s: %d %v", extra, code, out)
		}
		return out
	}
	tokens := func(out map[string]any) float64 { n, _ := field(out, "usage", "completion_tokens").(float64); return n }
	reason := func(out map[string]any) any { return field(out, "choices", 0, "finish_reason") }

	plain := ask("hi", `"max_tokens": 10`)
	hi := tokens(plain) // "hi" and the end of the turn
	if reason(plain) != "stop" {
		t.Fatalf("the scripted reply: %v", plain)
	}
	if out := ask("hi", `"max_tokens": 10, "ignore_eos": true`); tokens(out) != 10 || reason(out) != "length" {
		t.Errorf("ignore_eos: %v tokens, %v; want 10 and length", tokens(out), reason(out))
	}
	if out := ask("hi", `"max_tokens": 10, "min_tokens": 6`); tokens(out) != 7 || reason(out) != "stop" {
		t.Errorf("min_tokens 6: %v tokens, %v; want 6 and the end of the turn, stop", tokens(out), reason(out))
	}
	if out := ask("hi", `"max_tokens": 10, "min_tokens": 1`); tokens(out) != hi {
		t.Errorf("min_tokens below the reply's length: %v tokens, want %v", tokens(out), hi)
	}
	if out := ask("one two three four five", `"n_predict": 2`); tokens(out) != 2 || reason(out) != "length" {
		t.Errorf("n_predict 2: %v tokens, %v", tokens(out), reason(out))
	}
	if out := ask("one two three four five", `"n_predict": -1`); reason(out) != "stop" {
		t.Errorf("n_predict -1 (no limit): %v", out)
	}
	if out := ask("one two three four five", `"n_predict": 3, "max_tokens": 2`); tokens(out) != 2 {
		t.Errorf("n_predict 3 beside max_tokens 2: %v tokens", tokens(out))
	}
	if out := ask("one two three four", `"stop": "three", "include_stop_str_in_output": true`); field(out, "choices", 0, "message", "content") != "one two three" {
		t.Errorf("include_stop_str_in_output: %v", out)
	}
	if out := ask("one two three four", `"stop": "three"`); field(out, "choices", 0, "message", "content") != "one two " {
		t.Errorf("a stop string: %v", out)
	}
	// vLLM's min_tokens holds stop strings off too.
	if out := ask("one two three four", `"stop": "one", "min_tokens": 3`); !strings.HasPrefix(field(out, "choices", 0, "message", "content").(string), "one two three") {
		t.Errorf("a stop string before min_tokens: %v", out)
	}
}

// TestRepetitionPenalty: vLLM's repetition_penalty is repeat_penalty over
// every token of the prompt and the reply (RepeatLastN −1), where
// llama.cpp's repeat_penalty looks at the last repeat_last_n (64).
func TestRepetitionPenalty(t *testing.T) {
	rp := float32(1.3)
	r := samplingRequest{}
	r.RepetitionPenalty = &rp
	p, e := r.params(100)
	if e != nil || p.RepeatPenalty != 1.3 || p.RepeatLastN != -1 {
		t.Fatalf("params: %+v %v", p, e)
	}
	// Token 7 stands 100 tokens back: outside repeat_penalty's window, inside
	// repetition_penalty's.
	history := append([]int32{7}, make([]int32, 100)...)
	for i := range history[1:] {
		history[1+i] = 1
	}
	logits := make([]float32, 10)
	logits[7], logits[3] = 2, 1.8
	vllm := sample.New(sample.Params{RepeatPenalty: 1.3, RepeatLastN: -1})
	if id := vllm.Sample(logits, history); id != 3 {
		t.Errorf("repetition_penalty: token %d, want 3 (7 penalised: 2/1.3 < 1.8)", id)
	}
	llama := sample.New(sample.Params{RepeatPenalty: 1.3})
	if id := llama.Sample(logits, history); id != 7 {
		t.Errorf("repeat_penalty: token %d, want 7 (out of its 64-token window)", id)
	}
}

// slowLM is a scripted model that takes a while over each token.
type slowLM struct{ *scripted }

func (s slowLM) Next(ids []int32) ([]float32, error) {
	time.Sleep(3 * time.Millisecond)
	return s.scripted.Next(ids)
}

// TestTMaxPredict: llama-server's t_max_predict_ms ends a reply that has
// run that long at its first newline, finish_reason "length".
func TestTMaxPredict(t *testing.T) {
	s := newTemplateServer(t, chatML)
	ask := func(extra string) map[string]any {
		sc := say(s, "one two three\nfour five six seven")
		script(s, slowLM{sc})
		_, out := post(t, s, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "temperature": 0`+extra+`}`)
		return out
	}
	if out := ask(`, "t_max_predict_ms": 1`); field(out, "choices", 0, "message", "content") != "one two three\n" || field(out, "choices", 0, "finish_reason") != "length" {
		t.Errorf("t_max_predict_ms 1: %v", out)
	}
	if out := ask(``); field(out, "choices", 0, "message", "content") != "one two three\nfour five six seven" {
		t.Errorf("without t_max_predict_ms: %v", out)
	}
}
