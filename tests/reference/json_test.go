package reference

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
// prefix; a finished one parses.
func TestJSONGrammarAgainstLlamaCpp(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "json", "*.golden.json"))
	if len(files) < 6 {
		t.Fatalf("%d JSON goldens (run tests/reference/gen_json_goldens.sh)", len(files))
	}
	specs := map[string]testmodel.Spec{}
	for _, s := range testmodel.Specs() {
		specs[s.Name] = s
	}
	dir := t.TempDir()
	complete := 0
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			var g jsonGolden
			b, err := os.ReadFile(file)
			if err == nil {
				err = json.Unmarshal(b, &g)
			}
			if err != nil {
				t.Fatal(err)
			}
			model := name[:len(name)-len("-biasN.golden.json")]
			spec, ok := specs[model]
			if !ok {
				t.Fatalf("no gate model %s", model)
			}
			path := filepath.Join(dir, spec.File())
			if _, err := os.Stat(path); err != nil {
				if _, err := testmodel.Write(spec, path); err != nil {
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
			defer m.Close()
			bias := map[int32]float32{}
			for _, id := range g.Bias.IDs {
				bias[id] = g.Bias.Value
			}
			// Eagerly masked every step, and lazily (SampleConstrained: the
			// mask only when the favourite is refused), the same ids.
			var lazy []int32
			r, err := m.GenerateContext(context.Background(), g.PromptIDs, toy.GenerateOptions{
				MaxTokens: len(g.IDs), Sample: sample.Params{LogitBias: bias},
				Constraint: grammar.Tokens{JSON: grammar.NewJSON(), Vocab: m.Tokenizer},
				Stop:       m.Tokenizer.IsEOG,
			})
			if err != nil {
				t.Fatal(err)
			}
			lazy = r.IDs
			sampler := sample.New(sample.Params{LogitBias: bias})
			gram := grammar.NewJSON()
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
				if err := gram.Accept(m.Tokenizer.Piece(id)); err != nil {
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
