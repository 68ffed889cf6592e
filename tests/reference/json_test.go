package reference

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/grammar"
	"github.com/toyml/toy/toy/sample"
)

// jsonGolden is what json.mjs writes: llama.cpp's greedy ids under its JSON
// grammar, after a logit bias on the listed tokens.
type jsonGolden struct {
	ModelSHA256 string  `json:"model_sha256"`
	PromptIDs   []int32 `json:"prompt_ids"`
	Bias        struct {
		Value float32 `json:"value"`
		IDs   []int32 `json:"ids"`
	} `json:"bias"`
	IDs  []int32 `json:"ids"`
	Text string  `json:"text"`
}

// TestJSONGrammarAgainstLlamaCpp: greedy decoding under grammar.JSON's mask
// picks the tokens llama.cpp's grammar sampler picks with its json.gbnf,
// token for token, up to 96 or the end of generation — on a byte-level BPE
// (GPT-2) and a SentencePiece vocabulary with byte tokens (Llama), with
// the structural tokens biased so that the replies reach objects, arrays,
// numbers and literals (gen_json_goldens.sh). Each reply is a valid JSON
// prefix; a finished one parses. The same grammar written in GBNF
// (testdata/json/json.gbnf) gives the same ids through grammar.Matcher.
func TestJSONGrammarAgainstLlamaCpp(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "json", "*.golden.json"))
	if len(files) < 6 {
		t.Fatalf("%d JSON goldens (run tests/reference/gen_json_goldens.sh)", len(files))
	}
	src, err := os.ReadFile(filepath.Join("testdata", "json", "json.gbnf"))
	if err != nil {
		t.Fatal(err)
	}
	complete := 0
	for _, file := range files {
		name := filepath.Base(file)
		model := name[:len(name)-len("-biasN.golden.json")]
		t.Run(name, func(t *testing.T) {
			g, m := loadGrammarGolden(t, file, model)
			// The same grammar in GBNF, through grammar.Matcher.
			gbnf, err := grammar.ParseGBNF(string(src), nil)
			if err != nil {
				t.Fatal(err)
			}
			decodeUnderGrammar(t, m, g, grammar.NewMatcher(gbnf), func() grammar.State { return grammar.NewMatcher(gbnf) })
			gram := grammar.NewJSON()
			ids := decodeUnderGrammar(t, m, g, gram, func() grammar.State { return grammar.NewJSON() })
			if last := ids[len(ids)-1]; m.Tokenizer.IsEOG(last) {
				text := m.Tokenizer.Decode(ids[:len(ids)-1])
				if !json.Valid([]byte(text)) || !gram.Complete() {
					t.Errorf("finished reply %q is not a complete JSON object", text)
				}
				complete++
			}
			t.Logf("%d ids equal to llama.cpp's: %.60q…", len(ids), g.Text)
		})
	}
	if complete < 2 {
		t.Errorf("%d replies reached the end of the object: the goldens exercise too little", complete)
	}
}

// loadGrammarGolden reads a golden json.mjs wrote and loads the gate
// model it was made from (written afresh, its SHA-256 checked).
func loadGrammarGolden(t *testing.T, file, model string) (*jsonGolden, *toy.Model) {
	t.Helper()
	var g jsonGolden
	readJSON(t, file, &g)
	var spec *testmodel.Spec
	for _, s := range testmodel.Specs() {
		if s.Name == model {
			spec = &s
		}
	}
	if spec == nil {
		t.Fatalf("no gate model %s", model)
	}
	path := filepath.Join(gateModelDir(t), spec.File())
	if _, err := os.Stat(path); err != nil {
		if _, err := testmodel.Write(*spec, path); err != nil {
			t.Fatal(err)
		}
	}
	if sum, _ := testmodel.FileSHA256(path); sum != g.ModelSHA256 {
		t.Fatalf("model SHA-256 %s, the golden was made from %s", sum, g.ModelSHA256)
	}
	m, err := toy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &g, m
}

var (
	gateModelsOnce sync.Once
	gateModels     string
)

// gateModelDir is a directory the grammar gates share their gate models
// in, removed when the tests end (TestMain).
func gateModelDir(t *testing.T) string {
	gateModelsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toy-grammar-gate-")
		if err != nil {
			t.Fatal(err)
		}
		gateModels = dir
	})
	return gateModels
}

// decodeUnderGrammar decodes greedily under gram's mask, every step,
// and then again lazily (the mask only when the favourite is refused,
// through GenerateContext with a fresh state from newState); both must
// give the golden's ids, which it returns. gram is left after them.
func decodeUnderGrammar(t *testing.T, m *toy.Model, g *jsonGolden, gram grammar.State, newState func() grammar.State) []int32 {
	t.Helper()
	bias := map[int32]float32{}
	for _, id := range g.Bias.IDs {
		bias[id] = g.Bias.Value
	}
	r, err := m.GenerateContext(context.Background(), g.PromptIDs, toy.GenerateOptions{
		MaxTokens: len(g.IDs), Sample: sample.Params{LogitBias: bias},
		Constraint: grammar.Tokens{State: newState(), Vocab: m.Tokenizer},
		Stop:       m.Tokenizer.IsEOG,
	})
	if err != nil {
		t.Fatal(err)
	}
	lazy := r.IDs
	sampler := sample.New(sample.Params{LogitBias: bias})
	sess := engine.NewSession(m.Net, len(g.PromptIDs)+len(g.IDs)+1)
	logits, err := sess.Next(g.PromptIDs)
	var ids []int32
	for err == nil && len(ids) < len(g.IDs) {
		l := slices.Clone(logits)
		gram.Mask(l, m.Tokenizer)
		id := sampler.Sample(l, nil)
		ids = append(ids, id)
		if m.Tokenizer.IsEOG(id) {
			break
		}
		if err := gram.AcceptToken(id, m.Tokenizer); err != nil {
			t.Fatalf("step %d: the sampled token %d broke the grammar: %v", len(ids), id, err)
		}
		logits, err = sess.Next([]int32{id})
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, g.IDs) {
		n := 0
		for n < len(ids) && n < len(g.IDs) && ids[n] == g.IDs[n] {
			n++
		}
		t.Fatalf("ids part from llama.cpp's at step %d:\n toy:       %v\n llama.cpp: %v", n, ids, g.IDs)
	}
	if !slices.Equal(lazy, g.IDs) {
		t.Errorf("lazily masked ids differ from llama.cpp's:\n toy:       %v\n llama.cpp: %v", lazy, g.IDs)
	}
	return ids
}

func TestMain(m *testing.M) {
	code := m.Run()
	if gateModels != "" {
		os.RemoveAll(gateModels)
	}
	os.Exit(code)
}
