// Command geninputs writes the inputs of the quantizer gate for llama.cpp
// (tests/quantize/llamacpp_quantize.py): the random rows and the importance
// matrices as raw float32 with a JSON index, and the F32 gate models with
// their SHA-256.
//
//	go run ./tests/quantize/geninputs -out /tmp/quantize-inputs
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/toyml/toy/internal/testmodel"
	quantize "github.com/toyml/toy/tests/quantize"
	"github.com/toyml/toy/toy/gguf"
)

type rowEntry struct {
	quantize.RowCase
	Offset int      `json:"offset"` // in float32 values, into rows.f32
	Types  []string `json:"types"`  // the RowTypes whose block fits RowLen
}

// imatrixEntry is a row set's importances: RowLen float32 in imatrix.f32.
type imatrixEntry struct {
	Case   string `json:"case"` // the row set's name
	Kind   string `json:"kind"`
	Offset int    `json:"offset"` // in float32 values, into imatrix.f32
}

type modelEntry struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// forwardEntry is the forward gate's model: its F32 source, and the file
// toy quantized from it, which llama.cpp runs (gen_goldens.sh).
type forwardEntry struct {
	quantize.ModelCase
	Source    modelEntry `json:"source"`
	File      string     `json:"file"`
	SHA256    string     `json:"sha256"`
	PromptIDs []int32    `json:"prompt_ids"`
}

func main() {
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if *out == "" {
		fail(fmt.Errorf("usage: geninputs -out DIR"))
	}
	if err := os.MkdirAll(filepath.Join(*out, "models"), 0o755); err != nil {
		fail(err)
	}
	var index struct {
		Rows    []rowEntry     `json:"rows"`
		Imatrix []imatrixEntry `json:"imatrix"`
		Models  []modelEntry   `json:"models"`
		// ModelImatrix: quantize.ModelImatrix of each model, in
		// imatrix_models.f32, per matrix by offset and size (floats).
		ModelImatrix map[string][]modelImatrixEntry `json:"model_imatrix"`
		Cases        []quantize.ModelCase           `json:"cases"`
		Forward      forwardEntry                   `json:"forward"`
	}
	var raw []byte
	var err error
	for _, c := range quantize.RowCases() {
		e := rowEntry{RowCase: c, Offset: len(raw) / 4}
		for _, t := range quantize.RowTypes {
			if c.RowLen%t.BlockSize() == 0 {
				e.Types = append(e.Types, t.String())
			}
		}
		for _, v := range c.Values() {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
		index.Rows = append(index.Rows, e)
	}
	if err := os.WriteFile(filepath.Join(*out, "rows.f32"), raw, 0o644); err != nil {
		fail(err)
	}
	raw = raw[:0]
	for _, c := range quantize.ImatrixCases() {
		index.Imatrix = append(index.Imatrix, imatrixEntry{Case: c.Rows.Name, Kind: c.Kind, Offset: len(raw) / 4})
		for _, v := range c.Importance() {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
	}
	if err := os.WriteFile(filepath.Join(*out, "imatrix.f32"), raw, 0o644); err != nil {
		fail(err)
	}
	var imRaw []byte
	for _, s := range quantize.ModelSpecs() {
		file := filepath.Join("models", s.File())
		sum, err := testmodel.Write(s.Spec, filepath.Join(*out, file))
		if err != nil {
			fail(err)
		}
		index.Models = append(index.Models, modelEntry{Name: s.Name, File: file, SHA256: sum})
		fmt.Fprintf(os.Stderr, "%s  %s\n", sum, file)
		f, err := gguf.Open(filepath.Join(*out, file))
		if err != nil {
			fail(err)
		}
		im := quantize.ModelImatrix(f.Tensors)
		f.Close()
		names := make([]string, 0, len(im))
		for name := range im {
			names = append(names, name)
		}
		slices.Sort(names)
		if index.ModelImatrix == nil {
			index.ModelImatrix = map[string][]modelImatrixEntry{}
		}
		for _, name := range names {
			index.ModelImatrix[s.Name] = append(index.ModelImatrix[s.Name], modelImatrixEntry{Name: name, Offset: len(imRaw) / 4, Size: len(im[name])})
			for _, v := range im[name] {
				imRaw = binary.LittleEndian.AppendUint32(imRaw, math.Float32bits(v))
			}
		}
	}
	if err := os.WriteFile(filepath.Join(*out, "imatrix_models.f32"), imRaw, 0o644); err != nil {
		fail(err)
	}
	index.Cases = quantize.ModelCases()
	if index.Forward, err = writeForward(*out); err != nil {
		fail(err)
	}
	b, _ := json.MarshalIndent(index, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "inputs.json"), append(b, '\n'), 0o644); err != nil {
		fail(err)
	}
}

// modelImatrixEntry is one matrix's importance in imatrix_models.f32.
type modelImatrixEntry struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
}

// writeForward writes the forward gate's F32 model and toy's Q4_K_M of it.
func writeForward(out string) (forwardEntry, error) {
	s, c := quantize.ForwardCase()
	e := forwardEntry{ModelCase: c, PromptIDs: s.PromptIDs, Source: modelEntry{Name: s.Name, File: filepath.Join("models", s.File())}}
	var err error
	if e.Source.SHA256, err = testmodel.Write(s, filepath.Join(out, e.Source.File)); err != nil {
		return e, err
	}
	f, err := gguf.Open(filepath.Join(out, e.Source.File))
	if err != nil {
		return e, err
	}
	defer f.Close()
	ft, err := gguf.ParseFileType(c.Type)
	if err != nil {
		return e, err
	}
	w, _, err := gguf.QuantizeModel(f, gguf.QuantizeOptions{FileType: ft})
	if err != nil {
		return e, err
	}
	e.File = filepath.Join("models", c.Name()+".toy.gguf")
	if err := w.WriteFile(filepath.Join(out, e.File)); err != nil {
		return e, err
	}
	e.SHA256, err = testmodel.FileSHA256(filepath.Join(out, e.File))
	fmt.Fprintf(os.Stderr, "%s  %s\n", e.SHA256, e.File)
	return e, err
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "geninputs:", err)
	os.Exit(1)
}
