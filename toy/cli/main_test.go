package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/tensor"
)

// tinyModel writes a small llama-arch model with a synthetic vocabulary.
func tinyModel(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	spec := testmodel.Spec{Name: "tiny", Arch: "llama", DType: tensor.F32, Vocab: "none", VocabSize: 300,
		Embed: 32, Layers: 1, FFN: 64, Heads: 2, KVHeads: 1, Context: 64, Seed: 1}
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func runToy(args ...string) (status int, stdout, stderr string) {
	var out, errb bytes.Buffer
	status = run(args, &out, &errb)
	return status, out.String(), errb.String()
}

func TestInferJSON(t *testing.T) {
	model := tinyModel(t)
	status, out, errs := runToy("infer", model, "--prompt-ids", "1 5 9", "--n", "6", "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	keys := []string{}
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"format", "ids", "model", "prefill_tokens_per_second", "prompt_ids", "tokens_per_second"}
	if !slices.Equal(keys, want) || got["format"] != "toy/infer-v1" || len(got["ids"].([]any)) != 6 {
		t.Fatalf("infer JSON %s", out)
	}
	// Greedy is deterministic; so is sampling with a seed.
	_, again, _ := runToy("infer", model, "--prompt-ids", "1 5 9", "--n", "6", "--json")
	if !sameIDs(out, again) {
		t.Error("greedy infer gave different ids twice")
	}
	_, s1, _ := runToy("infer", model, "--prompt-ids", "1 5 9", "--n", "12", "--temperature", "1", "--seed", "42", "--json")
	_, s2, _ := runToy("infer", "--seed", "42", model, "--prompt-ids", "1 5 9", "--n", "12", "--temperature", "1", "--json")
	if !sameIDs(s1, s2) {
		t.Error("same seed, different samples")
	}
	// --warmup runs the generation first, untimed: the output is the same
	// (sampling included: each run starts from the seed), and once streamed.
	_, w, _ := runToy("infer", model, "--prompt-ids", "1 5 9", "--n", "12", "--temperature", "1", "--seed", "42", "--warmup", "2", "--json")
	if !sameIDs(s1, w) {
		t.Errorf("with --warmup 2: %s, without: %s", w, s1)
	}
	if status, _, errs := runToy("infer", model, "--prompt-ids", "1", "--warmup", "-1"); status == 0 || !strings.Contains(errs, "--warmup") {
		t.Errorf("--warmup -1: status %d, %q", status, errs)
	}
}

func sameIDs(a, b string) bool {
	var x, y struct{ IDs []int32 }
	json.Unmarshal([]byte(a), &x)
	json.Unmarshal([]byte(b), &y)
	return len(x.IDs) > 0 && slices.Equal(x.IDs, y.IDs)
}

func TestEvalJSON(t *testing.T) {
	model := tinyModel(t)
	status, out, errs := runToy("eval", model, "--prompt-ids", "1,5,9", "--top-k", "3", "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	var got struct {
		Format string
		Tokens []struct {
			ID      int32
			Logprob *float64
			Top     []struct {
				ID      int32
				Logprob float64
			}
		}
		Next []struct {
			ID      int32
			Logprob float64
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Format != "toy/eval-v1" || len(got.Tokens) != 3 || got.Tokens[0].Logprob != nil || len(got.Next) != 3 {
		t.Fatalf("eval JSON %s", out)
	}
	for i, tok := range got.Tokens[1:] {
		if tok.Logprob == nil || *tok.Logprob > 0 || len(tok.Top) != 3 || tok.Top[0].Logprob < tok.Top[1].Logprob {
			t.Fatalf("token %d: %+v", i+1, tok)
		}
		if *tok.Logprob > tok.Top[0].Logprob {
			t.Fatalf("token %d log-prob %v above the top one %v", i+1, *tok.Logprob, tok.Top[0].Logprob)
		}
	}
}

// Bad input: one line on stderr naming the problem, status 2, no panic.
func TestBadInput(t *testing.T) {
	model := tinyModel(t)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	good, _ := os.ReadFile(model)
	unknown := gguf.NewWriter()
	unknown.SetString("general.architecture", "mamba")
	var ub bytes.Buffer
	unknown.WriteTo(&ub)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"infer", filepath.Join(dir, "nope.gguf"), "--prompt-ids", "1"}, "model not found"},
		{"not gguf", []string{"infer", write("text.gguf", []byte("hello, world")), "--prompt-ids", "1"}, "not a GGUF file"},
		{"empty file", []string{"eval", write("empty.gguf", nil), "--prompt-ids", "1"}, "truncated"},
		{"truncated", []string{"infer", write("cut.gguf", good[:len(good)/2]), "--prompt-ids", "1"}, "truncated"},
		{"unknown arch", []string{"infer", write("mamba.gguf", ub.Bytes()), "--prompt-ids", "1"}, `unknown architecture "mamba"`},
		{"id out of range", []string{"infer", model, "--prompt-ids", "1 300"}, "token id out of range: 300"},
		{"negative id", []string{"eval", model, "--prompt-ids", "-1"}, "token id out of range"},
		{"bad ids", []string{"infer", model, "--prompt-ids", "1 x"}, `"x" is not a token id`},
		{"no ids", []string{"infer", model, "--prompt-ids", " "}, "no token ids"},
		{"both prompts", []string{"infer", model, "--prompt", "hi", "--prompt-ids", "1"}, "not both"},
		{"two models", []string{"infer", model, model, "--prompt-ids", "1"}, "exactly one MODEL"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"bad flag", []string{"infer", model, "--nope"}, "flag provided but not defined"},
		{"too long", []string{"infer", model, "--prompt-ids", strings.Repeat("1 ", 65)}, "context is full"},
	}
	for _, c := range cases {
		status, _, errs := runToy(c.args...)
		if status != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 && c.name != "unknown command" {
			t.Errorf("%s: status %d, stderr %q; want 2 and %q on one line", c.name, status, errs, c.want)
		}
		if strings.Contains(errs, "internal error") || strings.Contains(errs, "goroutine") {
			t.Errorf("%s: panicked: %s", c.name, errs)
		}
	}
}

// Text in, text out, on a model with GPT-2's real vocabulary.
func TestTextPrompts(t *testing.T) {
	model, data := trainFixture(t)
	status, out, errs := runToy("infer", model, "--prompt", "Hello, world", "--n", "5", "--json")
	if status != 0 {
		t.Fatalf("infer --prompt: %s", errs)
	}
	var inf struct {
		PromptIDs []int32 `json:"prompt_ids"`
		IDs       []int32
		Text      *string
	}
	json.Unmarshal([]byte(out), &inf)
	if !slices.Equal(inf.PromptIDs, []int32{15496, 11, 995}) || inf.Text == nil || len(inf.IDs) == 0 {
		t.Fatalf("infer JSON %s", out)
	}
	status, out, _ = runToy("tokenize", model, "Hello <|endoftext|>", "--special", "--json")
	if status != 0 || strings.TrimSpace(out) != `{"format":"toy/tokenize-v1","ids":[15496,220,50256],"pieces":["Hello"," ","<|endoftext|>"]}` {
		t.Fatalf("tokenize: %d %s", status, out)
	}
	_, out, _ = runToy("tokenize", model, "Hello <|endoftext|>", "--json")
	if strings.Contains(out, "50256") {
		t.Fatalf("special token parsed without --special: %s", out)
	}
	status, out, _ = runToy("eval", model, "--prompt", "Hello, world", "--json")
	if status != 0 || !strings.Contains(out, `"piece":" world"`) {
		t.Fatalf("eval --prompt: %s", out)
	}
	status, out, errs = runToy("eval", model, "--file", data, "--window", "32", "--json")
	var ppl struct{ Perplexity float64 }
	json.Unmarshal([]byte(out), &ppl)
	if status != 0 || !(ppl.Perplexity > 1) {
		t.Fatalf("eval --file: %d %s %s", status, out, errs)
	}
	// --stop ends the text at the stop string (which is not included).
	_, out, _ = runToy("infer", model, "--prompt", "Hello", "--n", "20", "--stop", " ", "--json")
	json.Unmarshal([]byte(out), &inf)
	if inf.Text == nil || strings.Contains(*inf.Text, " ") {
		t.Fatalf("--stop: %s", out)
	}
}

// Without a MODEL argument the default model toy ships with answers.
func TestDefaultModel(t *testing.T) {
	status, out, errs := runToy("infer", "--prompt", "func main() {", "--n", "8", "--json")
	if status != 0 {
		t.Fatalf("infer with the default model: %s", errs)
	}
	var inf struct {
		Model string
		IDs   []int32
		Text  *string
	}
	if err := json.Unmarshal([]byte(out), &inf); err != nil || inf.Model != "toy-go" || len(inf.IDs) == 0 || inf.Text == nil {
		t.Fatalf("infer JSON %s", out)
	}
	status, out, _ = runToy("tokenize", "if err != nil {", "--json")
	if status != 0 || !strings.Contains(out, `"pieces":["if"," err"," !="," nil"," {"]`) {
		t.Fatalf("tokenize with the default model: %s", out)
	}
}

// TestInferFormatJSON: --format json keeps the reply a JSON object, for
// greedy and sampled decoding; an unknown format is a usage error.
func TestInferFormatJSON(t *testing.T) {
	model := tinyModel(t)
	for _, args := range [][]string{{"--temperature", "0"}, {"--temperature", "1", "--seed", "7"}, {"--temperature", "1.5", "--seed", "9"}} {
		status, out, errs := runToy(append([]string{"infer", model, "--prompt", "x", "--n", "40", "--format", "json"}, args...)...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, errs)
		}
		out = strings.TrimSuffix(out, "\n") // infer ends the streamed text with a newline
		if out == "" || grammar.NewJSON().Accept(out) != nil {
			t.Errorf("%v: %q is not the start of a JSON object", args, out)
		}
	}
	if status, _, errs := runToy("infer", model, "--prompt", "x", "--format", "yaml"); status != 2 || !strings.Contains(errs, "want json") {
		t.Errorf("--format yaml: status %d, %q", status, errs)
	}
	// --schema: the reply follows the schema as far as it goes.
	schemaFile := filepath.Join(t.TempDir(), "schema.json")
	schema := `{"type": "object", "properties": {"id": {"type": "integer"}, "tag": {"enum": ["x", "y"]}}, "required": ["id", "tag"]}`
	os.WriteFile(schemaFile, []byte(schema), 0o644)
	compiled, err := grammar.CompileSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range 4 {
		status, out, errs := runToy("infer", model, "--prompt", "x", "--n", "40", "--schema", schemaFile, "--temperature", "1", "--seed", fmt.Sprint(seed))
		out = strings.TrimSuffix(out, "\n")
		if status != 0 || out == "" || grammar.NewJSONSchema(compiled).Accept(out) != nil {
			t.Errorf("--schema, seed %d: status %d, %q does not follow the schema (%s)", seed, status, out, errs)
		}
	}
	// --grammar and --grammar-file: the reply stays in the grammar.
	const src = "root ::= (\"ab\" | [0-9]{1,3}) (\",\" (\"ab\" | [0-9]{1,3}))*"
	g, err := grammar.ParseGBNF(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	grammarFile := filepath.Join(t.TempDir(), "list.gbnf")
	os.WriteFile(grammarFile, []byte(src+"\n"), 0o644)
	for seed, flags := range [][]string{{"--grammar", src}, {"--grammar-file", grammarFile}, {"--grammar-file", grammarFile, "--temperature", "1"}} {
		status, out, errs := runToy(append([]string{"infer", model, "--prompt", "x", "--n", "30", "--seed", fmt.Sprint(seed)}, flags...)...)
		out = strings.TrimSuffix(out, "\n")
		if status != 0 || out == "" || grammar.NewMatcher(g).Accept(out) != nil {
			t.Errorf("%v: status %d, %q is not in the grammar (%s)", flags, status, out, errs)
		}
	}
	if status, _, errs := runToy("infer", model, "--prompt", "x", "--grammar", "root ::= [a-"); status == 0 || !strings.Contains(errs, "unterminated character class") {
		t.Errorf("a bad grammar: status %d, %q", status, errs)
	}
	if status, _, errs := runToy("infer", model, "--prompt", "x", "--grammar", src, "--format", "json"); status != 2 || !strings.Contains(errs, "give one of them") {
		t.Errorf("--grammar with --format json: status %d, %q", status, errs)
	}
	os.WriteFile(schemaFile, []byte(`{"type": "object", "properties": {"n": {"type": "integer", "not": {"const": 1}}}}`), 0o644)
	if status, _, errs := runToy("infer", model, "--prompt", "x", "--schema", schemaFile); status == 0 || !strings.Contains(errs, "not not supported") {
		t.Errorf("--schema with not: status %d, %q", status, errs)
	}
}

// TestInferDraft: --draft gives the tokens toy infer gives without it and
// reports the draft's guesses; a draft of another vocabulary is refused.
func TestInferDraft(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{}
	for _, s := range testmodel.Specs() {
		if s.Name == "llama-f32" || s.Name == "llama-q8_0" || s.Name == "gpt2-f32" {
			paths[s.Name] = filepath.Join(dir, s.File())
			if _, err := testmodel.Write(s, paths[s.Name]); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := []string{"infer", paths["llama-f32"], "--prompt-ids", "1 450 4996 17354", "--n", "24", "--json"}
	_, plain, _ := runToy(args...)
	status, spec, errs := runToy(append(args, "--draft", paths["llama-q8_0"], "--draft-n", "4")...)
	var a, b struct {
		IDs      []int32 `json:"ids"`
		Drafted  *int    `json:"draft_tokens"`
		Accepted *int    `json:"draft_accepted"`
	}
	json.Unmarshal([]byte(plain), &a)
	json.Unmarshal([]byte(spec), &b)
	if status != 0 || len(a.IDs) != 24 || !slices.Equal(a.IDs, b.IDs) || b.Drafted == nil || *b.Drafted == 0 || *b.Accepted > *b.Drafted {
		t.Fatalf("status %d (%s): without a draft %v, with %v (%v of %v kept)", status, errs, a.IDs, b.IDs, b.Accepted, b.Drafted)
	}
	if status, _, errs := runToy(append(args, "--draft", paths["gpt2-f32"])...); status == 0 || !strings.Contains(errs, "vocabulary differs") {
		t.Errorf("a GPT-2 draft: status %d, %q", status, errs)
	}
}

// rewriteModel copies the GGUF file src to a new file with its metadata
// changed by edit (which returns false to leave a key out).
func rewriteModel(t *testing.T, src string, edit func(key string, v gguf.Value) (gguf.Value, bool)) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if v, ok := edit(kv.Key, kv.Value); ok {
			w.Set(kv.Key, v)
		}
	}
	for _, ti := range f.Tensors {
		b, _, err := f.Data(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(ti.Name, ti.Type, b, ti.Shape()...); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "edited.gguf")
	if err := w.WriteFile(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// With no prompt, toy infer starts from the BOS token, as llama.cpp does;
// a model without one asks for a prompt, naming the flags that give one
// (not --prompt-ids alone, which the user never gave).
func TestInferNoPrompt(t *testing.T) {
	status, out, errs := runToy("infer", "--n", "6", "--json")
	var inf struct {
		PromptIDs []int32 `json:"prompt_ids"`
		IDs       []int32
		Text      *string
	}
	json.Unmarshal([]byte(out), &inf)
	if status != 0 || len(inf.PromptIDs) != 1 || len(inf.IDs) == 0 || inf.Text == nil {
		t.Fatalf("infer without a prompt: %d %s %s", status, out, errs)
	}
	m, err := loadModel(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if bos := m.Tokenizer.BOS(); bos < 0 || inf.PromptIDs[0] != bos {
		t.Errorf("prompt %v, the built-in model's BOS is %d", inf.PromptIDs, bos)
	}
	bpe, _ := trainFixture(t) // GPT-2's vocabulary: without the key, no BOS (SentencePiece's would default to 1)
	noBOS := rewriteModel(t, bpe, func(key string, v gguf.Value) (gguf.Value, bool) {
		return v, key != "tokenizer.ggml.bos_token_id"
	})
	status, _, errs = runToy("infer", noBOS, "--n", "2")
	if status != 2 || !strings.Contains(errs, "give --prompt or --prompt-ids") || strings.Contains(errs, "--prompt-ids:") {
		t.Errorf("infer without a prompt or a BOS token: %d %q", status, errs)
	}
	status, _, errs = runToy("eval", "--json")
	if status != 2 || !strings.Contains(errs, "give --prompt, --prompt-ids or --file") {
		t.Errorf("eval without a prompt: %d %q", status, errs)
	}
}

// toy eval's log-probabilities come from sample.LogSoftmax (and its
// perplexity from sample.LogProb), the one log-softmax toy has; the output
// is what eval printed with its own copy (testdata/eval-toy-go.golden was
// written by toy eval before the change).
func TestEvalOutputsUnchanged(t *testing.T) {
	_, a, errs := runToy("eval", "--prompt", "func main() { fmt.Println(x) }", "--top-k", "3")
	_, b, _ := runToy("eval", "--file", filepath.Join("testdata", "eval-prog.go.txt"), "--window", "16")
	if a == "" || b == "" {
		t.Fatalf("eval: %s", errs)
	}
	golden(t, "eval-toy-go.golden", a+b)
}
