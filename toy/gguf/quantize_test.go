package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/tensor"
)

func TestParseFileType(t *testing.T) {
	for s, want := range map[string]FileType{"q4_k_m": FileQ4_K_M, "Q4_K_M": FileQ4_K_M, "IQ4_xs": FileIQ4_XS, "f16": FileF16, "Q8_0": FileQ8_0} {
		got, err := ParseFileType(s)
		if err != nil || got != want {
			t.Errorf("ParseFileType(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"q2_k_s", "iq2_xxs", "q4_k", ""} { // need an imatrix, or are not llama.cpp names
		if _, err := ParseFileType(s); !errors.Is(err, ErrFileType) {
			t.Errorf("ParseFileType(%q): %v, want ErrFileType", s, err)
		}
	}
	for _, ft := range FileTypes() {
		back, err := ParseFileType(strings.ToLower(ft.String()))
		if err != nil || back != ft {
			t.Errorf("%v does not parse back: %v, %v", ft, back, err)
		}
	}
}

// mixModel is a llama-shaped file of zeros (quantized fast; only the
// chosen types matter here): layers layers of attn_q/k/v/output and
// ffn_gate/up/down with rows of 256, norms, the embeddings, and a head
// unless tied. kv sets the grouped-query ratio 8/kv.
func mixModel(t *testing.T, layers, kv int, tied bool, extra func(w *Writer)) *File {
	t.Helper()
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("general.file_type", 0)
	w.SetUint32("llama.block_count", uint32(layers))
	w.SetUint32("llama.attention.head_count", 8)
	w.SetUint32("llama.attention.head_count_kv", uint32(kv))
	add := func(name string, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		if err := w.AddFloat32(name, tensor.F32, make([]float32, n), shape...); err != nil {
			t.Fatal(err)
		}
	}
	add("token_embd.weight", 16, 256)
	for l := layers - 1; l >= 0; l-- { // written backwards: the output is ordered by layer
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", 256)
		add(p+"attn_q.weight", 256, 256)
		add(p+"attn_k.weight", 32*kv, 256)
		add(p+"attn_v.weight", 32*kv, 256)
		add(p+"attn_output.weight", 256, 256)
		add(p+"ffn_gate.weight", 256, 256)
		add(p+"ffn_up.weight", 256, 256)
		add(p+"ffn_down.weight", 256, 256)
	}
	add("output_norm.weight", 256)
	if !tied {
		add("output.weight", 16, 256)
	}
	if extra != nil {
		extra(w)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func quantizeTypes(t *testing.T, f *File, opt QuantizeOptions) map[string]tensor.DType {
	t.Helper()
	_, done, err := QuantizeModel(f, opt)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]tensor.DType{}
	for _, q := range done {
		types[q.Name] = q.To
	}
	return types
}

// TestQuantizeModelQ4KM: of 8 layers, use_more_bits picks the first and
// last eighth (layers 0 and 7) and every third from the first eighth on
// ((i − 1) % 3 == 2: layers 3 and 6), whose attn_v and ffn_down get Q6_K;
// the head gets Q6_K, norms stay F32, the rest is Q4_K.
func TestQuantizeModelQ4KM(t *testing.T) {
	types := quantizeTypes(t, mixModel(t, 8, 2, false, nil), QuantizeOptions{FileType: FileQ4_K_M})
	for l := 0; l < 8; l++ {
		want := tensor.Q4_K
		if l == 0 || l == 3 || l == 6 || l == 7 {
			want = tensor.Q6_K
		}
		for _, m := range []string{"attn_v", "ffn_down"} {
			if got := types[fmt.Sprintf("blk.%d.%s.weight", l, m)]; got != want {
				t.Errorf("layer %d %s: %v, want %v", l, m, got, want)
			}
		}
		for _, m := range []string{"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"} {
			if got := types[fmt.Sprintf("blk.%d.%s.weight", l, m)]; got != tensor.Q4_K {
				t.Errorf("layer %d %s: %v, want Q4_K", l, m, got)
			}
		}
		if got := types[fmt.Sprintf("blk.%d.attn_norm.weight", l)]; got != tensor.F32 {
			t.Errorf("layer %d attn_norm: %v, want F32", l, got)
		}
	}
	if types["output.weight"] != tensor.Q6_K || types["token_embd.weight"] != tensor.Q4_K {
		t.Errorf("head %v, embeddings %v; want Q6_K, Q4_K", types["output.weight"], types["token_embd.weight"])
	}
}

// TestQuantizeModelIQ4XS: with 4 query heads per KV head every attn_v gets
// Q5_K, and ffn_down in the first eighth of layers (layer 0 of 8) too; a
// tied embedding is the head: Q6_K.
func TestQuantizeModelIQ4XS(t *testing.T) {
	types := quantizeTypes(t, mixModel(t, 8, 2, true, nil), QuantizeOptions{FileType: FileIQ4_XS})
	for l := 0; l < 8; l++ {
		if got := types[fmt.Sprintf("blk.%d.attn_v.weight", l)]; got != tensor.Q5_K {
			t.Errorf("layer %d attn_v: %v, want Q5_K", l, got)
		}
		want := tensor.IQ4_XS
		if l == 0 {
			want = tensor.Q5_K
		}
		if got := types[fmt.Sprintf("blk.%d.ffn_down.weight", l)]; got != want {
			t.Errorf("layer %d ffn_down: %v, want %v", l, got, want)
		}
	}
	if got := types["token_embd.weight"]; got != tensor.Q6_K {
		t.Errorf("tied embeddings: %v, want Q6_K", got)
	}
	// Pure: every matrix IQ4_XS, the head too.
	types = quantizeTypes(t, mixModel(t, 8, 2, true, nil), QuantizeOptions{FileType: FileIQ4_XS, Pure: true})
	for name, got := range types {
		if !strings.HasSuffix(name, "norm.weight") && got != tensor.IQ4_XS {
			t.Errorf("pure: %s is %v, want IQ4_XS", name, got)
		}
	}
}

// TestQuantizeModelFallbacks: rows of 96 are not whole Q4_K blocks of 256,
// so Q4_K falls back to Q5_0 (blocks of 32); rows of 48 fit neither: F16.
func TestQuantizeModelFallbacks(t *testing.T) {
	f := mixModel(t, 2, 2, false, func(w *Writer) {
		w.AddFloat32("blk.0.ffn_up_extra.weight", tensor.F32, make([]float32, 4*96), 4, 96)
		w.AddFloat32("blk.1.ffn_up_extra.weight", tensor.F32, make([]float32, 4*48), 4, 48)
	})
	_, done, err := QuantizeModel(f, QuantizeOptions{FileType: FileQ4_K_S})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, q := range done {
		want, fallback := map[string]tensor.DType{"blk.0.ffn_up_extra.weight": tensor.Q5_0, "blk.1.ffn_up_extra.weight": tensor.F16}[q.Name]
		if fallback {
			seen++
		}
		if fallback && (q.To != want || !q.Fallback) {
			t.Errorf("%s: %v (fallback %v), want %v as a fallback", q.Name, q.To, q.Fallback, want)
		}
		if !fallback && q.Fallback {
			t.Errorf("%s: a fallback", q.Name)
		}
	}
	if seen != 2 {
		t.Errorf("%d of the 2 odd tensors quantized", seen)
	}
}

// TestQuantizeModelFile: tensors ordered by layer (blk.10 after blk.9),
// then by name; general.file_type and general.quantization_version last;
// the bytes those of QuantizeRows.
func TestQuantizeModelFile(t *testing.T) {
	f := mixModel(t, 11, 8, false, nil)
	w, _, err := QuantizeModel(f, QuantizeOptions{FileType: FileQ8_0})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w.WriteTo(&buf)
	q, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(q.KV); q.KV[n-2].Key != "general.quantization_version" || q.KV[n-1].Key != "general.file_type" {
		t.Errorf("metadata ends %s, %s", q.KV[n-2].Key, q.KV[n-1].Key)
	}
	if ft, _ := q.Uint32("general.file_type"); ft != 7 {
		t.Errorf("file_type %d, want 7", ft)
	}
	var names []string
	for _, ti := range q.Tensors {
		names = append(names, ti.Name)
	}
	want := []string{"output.weight", "output_norm.weight", "token_embd.weight", "blk.0.attn_k.weight"}
	if !slicesHasPrefix(names, want) {
		t.Errorf("order starts %v, want %v", names[:4], want)
	}
	if names[len(names)-1] != "blk.10.ffn_up.weight" {
		t.Errorf("last tensor %s, want blk.10.ffn_up.weight", names[len(names)-1])
	}
	b, _, _ := q.Data("blk.3.attn_q.weight")
	src, _ := f.Dequantize("blk.3.attn_q.weight")
	if ref, _ := tensor.QuantizeRows(tensor.Q8_0, src, 256); !bytes.Equal(b, ref) {
		t.Error("blk.3.attn_q.weight: bytes are not QuantizeRows'")
	}
}

func slicesHasPrefix(s, prefix []string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := range prefix {
		if s[i] != prefix[i] {
			return false
		}
	}
	return true
}

func TestQuantizeModelErrors(t *testing.T) {
	f := mixModel(t, 2, 2, false, nil)
	if _, _, err := QuantizeModel(f, QuantizeOptions{FileType: 21}); !errors.Is(err, ErrFileType) { // Q2_K_S needs an imatrix
		t.Errorf("Q2_K_S: %v, want ErrFileType", err)
	}
	q8 := mixModel(t, 2, 2, false, func(w *Writer) {
		w.AddFloat32("blk.0.attn_q_extra.weight", tensor.Q8_0, make([]float32, 256*4), 4, 256)
	})
	if _, _, err := QuantizeModel(q8, QuantizeOptions{FileType: FileQ4_K_M}); err == nil || !strings.Contains(err.Error(), "requantiz") {
		t.Errorf("a Q8_0 tensor to Q4_K: %v, want a requantizing error", err)
	}
	if _, _, err := QuantizeModel(q8, QuantizeOptions{FileType: FileQ4_K_M, AllowRequantize: true}); err != nil {
		t.Errorf("with AllowRequantize: %v", err)
	}
	nan := mixModel(t, 2, 2, false, func(w *Writer) {
		x := make([]float32, 256*4)
		x[300] = float32(math.NaN())
		w.AddFloat32("blk.0.attn_q_extra.weight", tensor.F32, x, 4, 256)
	})
	if _, _, err := QuantizeModel(nan, QuantizeOptions{FileType: FileQ4_K_M}); err == nil || !strings.Contains(err.Error(), "element 300") {
		t.Errorf("a NaN weight: %v, want an error naming element 300", err)
	}
	moe := mixModel(t, 2, 2, false, func(w *Writer) {
		w.SetUint32("llama.expert_count", 4)
		w.AddFloat32("ffn_down_exps.weight", tensor.F32, make([]float32, 2*256*256), 2, 256, 256)
	})
	if _, _, err := QuantizeModel(moe, QuantizeOptions{FileType: FileQ4_K_M}); err == nil || !strings.Contains(err.Error(), "layer") {
		t.Errorf("an expert tensor outside the layers: %v, want an error naming its layer", err)
	}
}

// ExampleQuantizeModel quantizes a 2-layer model to Q4_K_M: Q4_K, with Q6_K
// for the head and, of two layers, the last one's attn_v and ffn_down.
func ExampleQuantizeModel() {
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.block_count", 2)
	w.SetUint32("llama.attention.head_count", 4)
	w.SetUint32("llama.attention.head_count_kv", 4)
	zeros := make([]float32, 256*256)
	w.AddFloat32("token_embd.weight", tensor.F32, zeros[:8*256], 8, 256)
	for _, l := range []string{"0", "1"} {
		w.AddFloat32("blk."+l+".attn_v.weight", tensor.F32, zeros, 256, 256)
		w.AddFloat32("blk."+l+".ffn_down.weight", tensor.F32, zeros, 256, 256)
		w.AddFloat32("blk."+l+".ffn_norm.weight", tensor.F32, zeros[:256], 256)
	}
	w.AddFloat32("output.weight", tensor.F32, zeros[:8*256], 8, 256)
	var buf bytes.Buffer
	w.WriteTo(&buf)
	f, _ := Parse(buf.Bytes())

	ft, _ := ParseFileType("Q4_K_M")
	_, done, err := QuantizeModel(f, QuantizeOptions{FileType: ft})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range done {
		fmt.Printf("%-22s %v → %v\n", q.Name, q.From, q.To)
	}
	// Output:
	// output.weight          F32 → Q6_K
	// token_embd.weight      F32 → Q4_K
	// blk.0.attn_v.weight    F32 → Q4_K
	// blk.0.ffn_down.weight  F32 → Q4_K
	// blk.0.ffn_norm.weight  F32 → F32
	// blk.1.attn_v.weight    F32 → Q6_K
	// blk.1.ffn_down.weight  F32 → Q6_K
	// blk.1.ffn_norm.weight  F32 → F32
}
