// The quantizer gate: toy's quantizers and mixes must write, byte for byte,
// what llama.cpp's write on the same float32 inputs. The goldens come from
// gen_goldens.sh (llama.cpp's ggml_quantize_chunk and llama_model_quantize,
// called from Python); this test regenerates the inputs and needs only Go.
package quantize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

var dump = flag.String("llama-dump", "", "directory of llamacpp_quantize.py --dump output: on a row mismatch, show the first differing block")

type rowGolden struct {
	Case    string `json:"case"`
	Imatrix string `json:"imatrix"` // the importances' kind (rows_imatrix.golden.json)
	Type    string `json:"type"`
	SHA256  string `json:"sha256"`
	Rows    string `json:"rows"` // the first 12 hex digits of each row's SHA-256
}

type modelGolden struct {
	Name     string `json:"name"`
	Model    string `json:"model"`
	Type     string `json:"type"`
	Pure     bool   `json:"pure"`
	FileType uint32 `json:"file_type"`
	SHA256   string `json:"sha256"`  // of the whole file
	Types    string `json:"types"`   // each tensor's type, in file order
	Tensors  string `json:"tensors"` // the first 12 hex digits of each tensor's SHA-256
}

func readGolden(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var typesByName = func() map[string]tensor.DType {
	m := map[string]tensor.DType{}
	for _, t := range RowTypes {
		m[t.String()] = t
	}
	return m
}()

// TestRowsMatchLlamaCpp quantizes every row set to every type and compares
// the bytes with llama.cpp's ggml_quantize_chunk: all of them, and each row.
func TestRowsMatchLlamaCpp(t *testing.T) {
	var g struct{ Cases []rowGolden }
	readGolden(t, "rows.golden.json", &g)
	cases := map[string]RowCase{}
	for _, c := range RowCases() {
		cases[c.Name] = c
	}
	seen := map[string]bool{}
	for _, want := range g.Cases {
		c, ok := cases[want.Case]
		if !ok {
			t.Errorf("golden row case %q is not in RowCases", want.Case)
			continue
		}
		seen[want.Type] = true
		got, err := tensor.QuantizeRows(typesByName[want.Type], c.Values(), c.RowLen)
		checkRows(t, want, want.Case, c, got, err)
	}
	for _, dt := range RowTypes {
		if !seen[dt.String()] {
			t.Errorf("no golden rows for %v", dt)
		}
	}
}

// TestRowsImatrixMatchLlamaCpp quantizes row sets with importance matrices
// to every type and compares the bytes with llama.cpp's
// ggml_quantize_chunk given the same imatrix: all of them, and each row.
func TestRowsImatrixMatchLlamaCpp(t *testing.T) {
	var g struct{ Cases []rowGolden }
	readGolden(t, "rows_imatrix.golden.json", &g)
	cases := map[string]ImatrixCase{}
	for _, c := range ImatrixCases() {
		cases[c.Name()] = c
	}
	seen := map[string]bool{}
	for _, want := range g.Cases {
		name := want.Case + "/" + want.Imatrix
		c, ok := cases[name]
		if !ok {
			t.Errorf("golden case %q is not in ImatrixCases", name)
			continue
		}
		seen[name], seen[want.Type] = true, true
		got, err := tensor.QuantizeRowsWeighted(typesByName[want.Type], c.Rows.Values(), c.Rows.RowLen, c.Importance())
		checkRows(t, want, want.Case+"."+want.Imatrix, c.Rows, got, err)
	}
	for _, c := range ImatrixCases() {
		if !seen[c.Name()] {
			t.Errorf("no golden rows for %s", c.Name())
		}
	}
	for _, dt := range RowTypes {
		if !seen[dt.String()] {
			t.Errorf("no golden rows with an imatrix for %v", dt)
		}
	}
}

// checkRows compares toy's bytes of row set c with llama.cpp's: on a
// mismatch it names the rows that differ and, with -llama-dump, the first
// block (from the dump file stem.TYPE.bin).
func checkRows(t *testing.T, want rowGolden, stem string, c RowCase, got []byte, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s %s: %v", stem, want.Type, err)
		return
	}
	if hexSHA(got) == want.SHA256 {
		return
	}
	rowBytes := len(got) / c.Rows
	var bad []int
	for r, h := range strings.Fields(want.Rows) {
		if !strings.HasPrefix(hexSHA(got[r*rowBytes:(r+1)*rowBytes]), h) {
			bad = append(bad, r)
		}
	}
	t.Errorf("%s %s: bytes differ from llama.cpp's in rows %v of %d%s", stem, want.Type, bad, c.Rows, firstDiff(stem, want.Type, got))
}

// firstDiff describes the first block that differs from llama.cpp's dump,
// when -llama-dump names one.
func firstDiff(stem, typ string, got []byte) string {
	if *dump == "" {
		return ""
	}
	ref, err := os.ReadFile(filepath.Join(*dump, stem+"."+typ+".bin"))
	if err != nil {
		return fmt.Sprintf(" (%v)", err)
	}
	size := typesByName[typ].TypeSize()
	n := 0
	first := -1
	for b := 0; b*size < len(ref) && b*size < len(got); b++ {
		if !bytes.Equal(ref[b*size:(b+1)*size], got[b*size:(b+1)*size]) {
			if first < 0 {
				first = b
			}
			n++
		}
	}
	if first < 0 {
		return ""
	}
	return fmt.Sprintf("; %d blocks differ, first %d:\n llama %x\n toy   %x", n, first,
		ref[first*size:(first+1)*size], got[first*size:(first+1)*size])
}

// TestModelsMatchLlamaCpp quantizes every gate model to every file type as
// llama_model_quantize does, and compares each tensor's type and bytes,
// and the whole file, with llama.cpp's.
func TestModelsMatchLlamaCpp(t *testing.T) {
	var g struct {
		Inputs      map[string]string   `json:"inputs"`
		TensorOrder map[string][]string `json:"tensor_order"`
		Cases       []modelGolden       `json:"cases"`
	}
	readGolden(t, "models.golden.json", &g)
	if testing.Short() {
		t.Skip("quantizes 8 models 30 ways: not in -short")
	}
	dir := t.TempDir()
	files := map[string]*gguf.File{}
	for _, s := range ModelSpecs() {
		path := filepath.Join(dir, s.File())
		sum, err := testmodel.Write(s.Spec, path)
		if err != nil {
			t.Fatal(err)
		}
		if sum != g.Inputs[s.Name] {
			t.Fatalf("%s: regenerated model has SHA-256 %s, the golden's input %s", s.Name, sum, g.Inputs[s.Name])
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[s.Name] = f
	}
	cases := map[string]ModelCase{}
	for _, c := range ModelCases() {
		cases[c.Name()] = c
	}
	if len(g.Cases) != len(cases) {
		t.Errorf("%d golden cases, ModelCases has %d", len(g.Cases), len(cases))
	}
	for _, want := range g.Cases {
		t.Run(want.Name, func(t *testing.T) {
			c, ok := cases[want.Name]
			if !ok {
				t.Fatalf("no case %s in ModelCases", want.Name)
			}
			opt, err := c.Options(files[want.Model])
			if err != nil {
				t.Fatal(err)
			}
			if uint32(opt.FileType) != want.FileType {
				t.Errorf("%s is file type %d, llama.cpp's %d", want.Type, opt.FileType, want.FileType)
			}
			w, _, err := gguf.QuantizeModel(files[want.Model], opt)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := w.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			q, err := gguf.Parse(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			names := g.TensorOrder[want.Model]
			types, sums := strings.Fields(want.Types), strings.Fields(want.Tensors)
			if len(q.Tensors) != len(names) {
				t.Fatalf("%d tensors, llama.cpp's file %d", len(q.Tensors), len(names))
			}
			for i, ti := range q.Tensors {
				if ti.Name != names[i] {
					t.Errorf("tensor %d is %s, llama.cpp's %s", i, ti.Name, names[i])
					continue
				}
				if ti.Type.String() != types[i] {
					t.Errorf("%s: %v, llama.cpp's %s", ti.Name, ti.Type, types[i])
					continue
				}
				b, _, _ := q.Data(ti.Name)
				if !strings.HasPrefix(hexSHA(b), sums[i]) {
					t.Errorf("%s (%v): bytes differ from llama.cpp's", ti.Name, ti.Type)
				}
			}
			if got := hexSHA(buf.Bytes()); got != want.SHA256 && !t.Failed() {
				t.Errorf("file SHA-256 %s, llama.cpp's %s (tensors agree: the header differs)", got, want.SHA256)
			}
		})
	}
}
