package gguf_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// A Writer collects metadata and tensors; Open maps the file back.
func Example() {
	dir, _ := os.MkdirTemp("", "gguf")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")

	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.block_count", 2)
	w.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.AddFloat32("output_norm.weight", tensor.F32, []float32{1, 2, 3, 4, 5, 6}, 2, 3) // row-major [2, 3]
	if err := w.WriteFile(path); err != nil {
		panic(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	arch, _ := f.Architecture()
	layers, _ := f.Int("llama.block_count")
	fmt.Println(f.Version, arch, layers)
	_, err = f.Int("llama.context_length")
	fmt.Println(errors.Is(err, gguf.ErrMissingKey))

	info, _ := f.Info("output_norm.weight")
	fmt.Println(info.Type, info.Dims, info.Shape()) // Dims innermost first, Shape row-major
	t, _ := f.Tensor("output_norm.weight")          // a view of the mapped file
	fmt.Println(t)
	// Output:
	// 3 llama 2
	// true
	// F32 [3 2] [2 3]
	// Tensor[2 3] F32 [1 2 3 4 5 6]
}

// Metadata is kept in the order it was set; Value.String renders it briefly.
func ExampleParse() {
	w := gguf.NewWriter()
	w.SetString("general.name", "toy")
	w.SetStrings("tokenizer.ggml.tokens", []string{"a", "b", "c"})
	w.AddFloat32("tok.weight", tensor.Q8_0, make([]float32, 64), 2, 32)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		panic(err)
	}

	f, err := gguf.Parse(buf.Bytes()) // tensors view buf's bytes
	if err != nil {
		panic(err)
	}
	for _, kv := range f.KV {
		fmt.Println(kv.Key, "=", kv.Value)
	}
	fmt.Println(f.ParamCount(), f.Quant())
	// Output:
	// general.name = toy
	// tokenizer.ggml.tokens = [3 × string]
	// 64 Q8_0
}

// Meta reads one architecture's keys; Decoder, the shape every decoder has.
func ExampleMeta_Decoder() {
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	for key, v := range map[string]uint32{"context_length": 2048, "embedding_length": 576, "block_count": 30,
		"feed_forward_length": 1536, "attention.head_count": 9, "attention.head_count_kv": 3} {
		w.SetUint32("llama."+key, v)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		panic(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		panic(err)
	}
	d, err := f.Meta("llama").Decoder()
	fmt.Printf("%+v %v\n", d, err)
	_, err = f.Meta("qwen2").Decoder()
	fmt.Println(errors.Is(err, gguf.ErrMissingKey))
	// Output:
	// {Context:2048 Embed:576 Layers:30 FFN:1536 Heads:9 KVHeads:3} <nil>
	// true
}
