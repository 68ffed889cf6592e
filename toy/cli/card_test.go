package cli

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

func TestDescribeAndCardCode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "qwen.gguf")
	spec := testmodel.Spec{Name: "qwen", Arch: "qwen2", DType: tensor.Q8_0, Vocab: "none", VocabSize: 320,
		Embed: 64, Layers: 2, FFN: 96, Heads: 4, KVHeads: 2, Context: 128, Tied: true, Seed: 1}
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	status, text, errs := runToy("describe", path)
	if status != 0 {
		t.Fatalf("describe: %d %s", status, errs)
	}
	golden(t, "describe-qwen2.golden", text)

	status, out, errs := runToy("describe", path, "--json")
	var js map[string]any
	if status != 0 || json.Unmarshal([]byte(out), &js) != nil {
		t.Fatalf("describe --json: %d %s %s", status, errs, out)
	}
	for _, k := range []string{"format", "model", "path", "arch", "name", "params", "quant", "hyperparameters", "parameters", "steps", "text"} {
		if _, ok := js[k]; !ok {
			t.Errorf("describe --json lacks %q", k)
		}
	}
	if js["format"] != "toy/card-v1" || js["text"] != text {
		t.Errorf("describe --json: %v", js["format"])
	}

	cardFile := filepath.Join(t.TempDir(), "qwen.card")
	os.WriteFile(cardFile, []byte(text), 0o644)
	for _, file := range []string{cardFile, path} { // a card, or a model described on the way
		status, code, errs := runToy("card", "code", file)
		if status != 0 {
			t.Fatalf("card code %s: %d %s", file, status, errs)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "c.go", code, 0); err != nil {
			t.Fatalf("%v\n%s", err, code)
		}
		squeezed := strings.Join(strings.Fields(code), " ") // gofmt's alignment depends on the longest field name
		for _, want := range []string{"llama.Config{", `Arch: "qwen2"`, "VocabSize: 320", "RopeNeoX: true", "RopeBase: 1e+06"} {
			if !strings.Contains(squeezed, want) {
				t.Errorf("card code lacks %q:\n%s", want, code)
			}
		}
	}
	status, out, errs = runToy("card", "parse", cardFile, "--json")
	if status != 0 || !strings.Contains(out, `"format":"toy/config-v1","arch":"qwen2","config":{"Arch":"qwen2","VocabSize":320`) {
		t.Errorf("card parse: %d %s %s", status, errs, out)
	}

	bad := filepath.Join(t.TempDir(), "bad.card")
	os.WriteFile(bad, []byte(strings.Replace(text, "d_e      = 64", "d_e      = sixty-four", 1)), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"card", "code", bad}, `embed = "sixty-four" is not an integer`},
		{[]string{"card", "frob", bad}, "toy card code FILE"},
		{[]string{"card", "code", filepath.Join(t.TempDir(), "none")}, "not found"},
		{[]string{"describe", "no-such-model"}, "toy list"},
		{[]string{"describe"}, "exactly one MODEL"},
	} {
		status, _, errs := runToy(c.args...)
		if status != 2 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: %d %q, want status 2 and %q on one line", c.args, status, errs, c.want)
		}
	}
}

// A model's name is the file's to choose: toy describe writes its control
// characters escaped, so an escape sequence in general.name cannot drive
// the terminal (clear it, retitle it, hide text) or add lines to the card;
// --json carries the name as it is.
func TestDescribeEscapesControls(t *testing.T) {
	const name = "evil\x1b[2J\x1b]0;owned\x07\r\nAlgorithm: fake\u202e\x9b"
	model := rewriteModel(t, tinyModel(t), func(key string, v gguf.Value) (gguf.Value, bool) {
		if key == "general.name" {
			v.V = name
		}
		return v, true
	})
	status, text, errs := runToy("describe", model)
	if status != 0 {
		t.Fatalf("describe: %d %s", status, errs)
	}
	if !strings.Contains(text, `Model: evil\x1b[2J\x1b]0;owned\a\r\nAlgorithm: fake\u202e\x9b`+"\n") {
		t.Errorf("the name is not escaped:\n%q", text)
	}
	for _, r := range text {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			t.Errorf("describe writes %U", r)
		}
	}
	if strings.Contains(text, "\nAlgorithm: fake") {
		t.Errorf("the name added a line to the card:\n%s", text)
	}
	_, out, _ := runToy("describe", model, "--json")
	var js struct{ Name string }
	if json.Unmarshal([]byte(out), &js); js.Name != strings.ToValidUTF8(name, "\uFFFD") {
		t.Errorf("--json name %q", js.Name)
	}
	if got := escapeControls("a\u009bb\xffc\td\n", true); got != `a\u009bb\xffc\td`+"\n" {
		t.Errorf("escapeControls: %q", got)
	}
}
