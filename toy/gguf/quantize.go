// Quantizing a model to one of llama.cpp's file types (Q4_K_M, IQ4_XS, …):
// which type each tensor gets, chosen as llama-quantize chooses it without
// an importance matrix or with one, and the file written as it writes it.

package gguf

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/tensor"
)

// FileType is llama.cpp's llama_ftype, stored as general.file_type: the
// mix of tensor types a quantized model holds. Q4_K_M, for example, keeps
// most matrices in Q4_K but the head, half the value projections and half
// the feed-forward down projections in Q6_K.
type FileType uint32

// The file types QuantizeModel writes (llama.cpp's numbering).
const (
	FileF32    FileType = 0
	FileF16    FileType = 1
	FileQ4_0   FileType = 2
	FileQ4_1   FileType = 3
	FileQ8_0   FileType = 7
	FileQ5_0   FileType = 8
	FileQ5_1   FileType = 9
	FileQ2_K   FileType = 10
	FileQ3_K_S FileType = 11
	FileQ3_K_M FileType = 12
	FileQ3_K_L FileType = 13
	FileQ4_K_S FileType = 14
	FileQ4_K_M FileType = 15
	FileQ5_K_S FileType = 16
	FileQ5_K_M FileType = 17
	FileQ6_K   FileType = 18
	FileIQ4_NL FileType = 25
	FileIQ4_XS FileType = 30
	FileBF16   FileType = 32
	// FileMXFP4_MOE is gpt-oss's mix: the experts' stacks in MXFP4, every
	// other matrix in Q8_0.
	FileMXFP4_MOE FileType = 38
)

// ErrFileType is returned for a file type QuantizeModel does not write.
var ErrFileType = errors.New("gguf: unknown or unsupported file type")

// baseTypes maps each writable file type to its base tensor type, the
// type of the matrices no rule moves (llama_ftype_get_default_type).
var baseTypes = map[FileType]tensor.DType{
	FileF32: tensor.F32, FileF16: tensor.F16, FileBF16: tensor.BF16, FileQ8_0: tensor.Q8_0,
	FileQ4_0: tensor.Q4_0, FileQ4_1: tensor.Q4_1, FileQ5_0: tensor.Q5_0, FileQ5_1: tensor.Q5_1,
	FileQ2_K: tensor.Q2_K, FileQ3_K_S: tensor.Q3_K, FileQ3_K_M: tensor.Q3_K, FileQ3_K_L: tensor.Q3_K,
	FileQ4_K_S: tensor.Q4_K, FileQ4_K_M: tensor.Q4_K, FileQ5_K_S: tensor.Q5_K, FileQ5_K_M: tensor.Q5_K,
	FileQ6_K: tensor.Q6_K, FileIQ4_NL: tensor.IQ4_NL, FileIQ4_XS: tensor.IQ4_XS, FileMXFP4_MOE: tensor.MXFP4,
}

// String returns llama.cpp's name of the file type ("Q4_K_M", "F16", …).
func (ft FileType) String() string {
	if s, ok := fileTypes[uint32(ft)]; ok {
		return s
	}
	return fmt.Sprintf("file_type(%d)", uint32(ft))
}

// BaseType returns the tensor type most matrices of the mix get, and false
// for a file type QuantizeModel does not write.
func (ft FileType) BaseType() (tensor.DType, bool) {
	t, ok := baseTypes[ft]
	return t, ok
}

// FileTypes returns the file types QuantizeModel writes, in llama.cpp's
// numbering order.
func FileTypes() []FileType {
	out := make([]FileType, 0, len(baseTypes))
	for ft := range baseTypes {
		out = append(out, ft)
	}
	slices.Sort(out)
	return out
}

// ParseFileType returns the file type named s as llama-quantize names it,
// in any case: "q4_k_m", "Q4_K_M", "iq4_xs", "f16", …
func ParseFileType(s string) (FileType, error) {
	for ft := range baseTypes {
		if strings.EqualFold(ft.String(), s) {
			return ft, nil
		}
	}
	names := make([]string, 0, len(baseTypes))
	for _, ft := range FileTypes() {
		names = append(names, strings.ToLower(ft.String()))
	}
	return 0, fmt.Errorf("%w: %q (one of %s)", ErrFileType, s, strings.Join(names, ", "))
}

// QuantizeOptions says how QuantizeModel quantizes.
type QuantizeOptions struct {
	// FileType is the mix to write: FileQ4_K_M, FileIQ4_XS, FileQ8_0, …
	FileType FileType
	// Pure gives every quantizable matrix the file type's base type, with
	// no per-tensor rules (llama-quantize --pure); rows that do not fit its
	// blocks still fall back to another type.
	Pure bool
	// AllowRequantize lets tensors already quantized (Q8_0, Q4_K, …) be
	// dequantized and quantized again (llama-quantize --allow-requantize);
	// without it only F32, F16 and BF16 tensors are converted.
	AllowRequantize bool
	// Imatrix, when not nil, holds the importance of each matrix's input
	// columns by tensor name, [experts·cols] (Imatrix.Weights; llama-quantize
	// --imatrix): rows are quantized to keep the important columns best
	// (tensor.QuantizeRowsWeighted), and the mix rules that ask whether
	// there is an importance matrix see one. A matrix it does not name is
	// quantized without.
	Imatrix map[string][]float32
	// OutputType and TokenEmbeddingType, when not nil, are the types of the
	// head and of the token embeddings, whatever the mix would choose
	// (--output-tensor-type, --token-embedding-type).
	OutputType, TokenEmbeddingType *tensor.DType
	// TensorTypes override the mix: a quantizable matrix whose name the
	// first of their patterns matches gets that type instead of the rules'
	// (--tensor-type PATTERN=TYPE; for a quantized file type only, and
	// still subject to the fallbacks for rows that do not fit its blocks).
	TensorTypes []TensorType
	// LeaveOutput keeps output.weight as it is (--leave-output-tensor).
	LeaveOutput bool
}

// TensorType is an override of QuantizeOptions.TensorTypes: the matrices
// whose names Pattern matches (anywhere in the name, as llama.cpp's
// std::regex_search) get Type.
type TensorType struct {
	Pattern *regexp.Regexp
	Type    tensor.DType
}

// ParseTensorType reads an override as llama-quantize's --tensor-type
// takes it: PATTERN=TYPE, the type by ggml's name in any case ("q8_0").
func ParseTensorType(s string) (TensorType, error) {
	pat, name, ok := strings.Cut(s, "=")
	if !ok || pat == "" {
		return TensorType{}, fmt.Errorf("tensor type %q: want PATTERN=TYPE", s)
	}
	t, err := ParseDType(name)
	if err != nil {
		return TensorType{}, err
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return TensorType{}, fmt.Errorf("tensor type %q: %w", s, err)
	}
	return TensorType{Pattern: re, Type: t}, nil
}

// ParseDType returns the tensor type QuantizeModel can write named s, by
// ggml's name in any case ("q8_0", "Q4_K", "f16").
func ParseDType(s string) (tensor.DType, error) {
	var names []string
	for _, t := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_1,
		tensor.Q5_0, tensor.Q5_1, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
		tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4} {
		if strings.EqualFold(t.String(), s) {
			return t, nil
		}
		names = append(names, strings.ToLower(t.String()))
	}
	return 0, fmt.Errorf("%w: tensor type %q (one of %s)", ErrFileType, s, strings.Join(names, ", "))
}

// QuantizedTensor is what QuantizeModel did to one tensor.
type QuantizedTensor struct {
	Name      string
	From, To  tensor.DType
	FromBytes int64
	ToBytes   int64
	Fallback  bool // its rows did not fit the chosen type's blocks; To is the fallback
}

// QuantizeModel returns a writer holding f quantized as llama.cpp's
// llama_model_quantize does (with opt.Imatrix as its imatrix), and what it did
// to each tensor, in the written order. f must stay open until the writer
// has written.
//
// Which tensors: the matrices (2-D and 3-D, the experts' stacks) whose names
// end in "weight", except norms, MoE routers (ffn_gate_inp), position
// embeddings and token types; every other tensor keeps its type and bytes.
//
// Which type: in F32, F16 and BF16 files, that type for all of them. In
// MXFP4_MOE files (gpt-oss's), the experts' stacks MXFP4 and every other
// matrix, the head too, Q8_0. Otherwise (unless Pure) the output head, and
// the token embeddings of a model whose head is tied to them, get Q6_K
// (Q8_0 when Q8_0 is the base, or when their rows are not whole blocks);
// the value projections (attn_v, GPT-2's fused attn_qkv) and the
// feed-forward down projections go up a type or two in some layers — by
// position, the first and last eighth of the layers and every third
// between (use_more_bits), or the first sixteenth, eighth or two —, attention output projections in Q2_K and
// Q3_K mixes, and, in models of 8 experts, attention values and keys to
// Q8_0 and their output projection to Q5_K. The comments of llamaType give
// each rule. With an importance matrix two rules change: IQ4_NL and IQ4_XS
// keep the first eighth of the down projections, and Q4_0 and Q5_0 move
// them to Q4_1 and Q5_1. OutputType, TokenEmbeddingType and TensorTypes
// take precedence over the rules, in that order (an override skips the
// rules' counting of that tensor, as in llama.cpp). A matrix whose rows do not fit its type's blocks falls back:
// IQ4_XS to IQ4_NL, Q2_K and Q3_K to Q4_0, Q4_K to Q5_0, Q5_K to Q5_1,
// Q6_K to Q8_0, and to F16 when rows do not fit even that. Tensors to be
// converted must hold finite values, and be F32, F16 or BF16 unless
// AllowRequantize.
//
// The file: metadata as in f, without split keys, general.file_type and
// general.quantization_version (2) last; tensors ordered by layer, then
// name, as llama.cpp orders them. The bytes are llama.cpp's
// (tensor.QuantizeRows), so the file is byte-identical to llama-quantize's
// on the same input; tests/quantize gates that.
func QuantizeModel(f *File, opt QuantizeOptions) (*Writer, []QuantizedTensor, error) {
	base, ok := opt.FileType.BaseType()
	if !ok {
		return nil, nil, fmt.Errorf("quantize: %w: %v", ErrFileType, opt.FileType)
	}
	m, err := readMixFacts(f)
	if err != nil {
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	m.hasImatrix = opt.Imatrix != nil
	m.outputType = opt.OutputType
	for name, w := range opt.Imatrix {
		for _, v := range w {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, nil, fmt.Errorf("quantize: the importance matrix of %s holds %v: only finite values", name, v)
			}
		}
	}
	w := NewWriter()
	for _, kv := range f.KV {
		switch kv.Key {
		case "general.quantization_version", "general.file_type", "split.no", "split.count", "split.tensors.count":
			continue
		}
		w.Set(kv.Key, kv.Value)
	}
	w.SetUint32("general.quantization_version", 2)
	w.SetUint32("general.file_type", uint32(opt.FileType))

	infos := slices.Clone(f.Tensors)
	slices.SortStableFunc(infos, func(a, b TensorInfo) int {
		if la, lb := layerOf(a.Name), layerOf(b.Name); la != lb {
			return cmp.Compare(la, lb)
		}
		return strings.Compare(a.Name, b.Name)
	})
	m.count(infos)
	var done []QuantizedTensor
	for _, ti := range infos {
		to, fellBack := ti.Type, false
		if quantizable(ti) && !(opt.LeaveOutput && ti.Name == "output.weight") {
			to, fellBack, err = m.choose(ti, opt, base)
			if err != nil {
				return nil, nil, fmt.Errorf("quantize %s: %w", ti.Name, err)
			}
		}
		weights, err := importance(opt.Imatrix, ti)
		if err != nil {
			return nil, nil, fmt.Errorf("quantize %s: %w", ti.Name, err)
		}
		data, err := convert(f, ti, to, opt.AllowRequantize, weights)
		if err != nil {
			return nil, nil, fmt.Errorf("quantize %s: %w", ti.Name, err)
		}
		if err := w.AddTensor(ti.Name, to, data, shapeOf(ti)...); err != nil {
			return nil, nil, fmt.Errorf("quantize: %w", err)
		}
		done = append(done, QuantizedTensor{Name: ti.Name, From: ti.Type, To: to, FromBytes: int64(ti.Size),
			ToBytes: int64(len(data)), Fallback: fellBack})
	}
	return w, done, nil
}

// importance returns the importance matrix of tensor ti, [experts·cols],
// or nil when there is none for it. One of another size is an error,
// except for the token embeddings (an imatrix never fits them), which are
// then quantized without, as llama.cpp does.
func importance(imatrix map[string][]float32, ti TensorInfo) ([]float32, error) {
	w, ok := imatrix[ti.Name]
	if !ok {
		return nil, nil
	}
	want := int(ti.Dims[0])
	if len(ti.Dims) > 2 {
		want *= int(ti.Dims[2])
	}
	if len(w) != want {
		if strings.Contains(ti.Name, "token_embd.weight") {
			return nil, nil
		}
		return nil, fmt.Errorf("its importance matrix has %d values, want %d", len(w), want)
	}
	return w, nil
}

// convert returns tensor ti's bytes as type to: its own bytes when the type
// stays, else its values quantized row by row, weighted by the importance
// matrix weights (nil: none; else one slice of columns per expert).
func convert(f *File, ti TensorInfo, to tensor.DType, requantize bool, weights []float32) ([]byte, error) {
	b, _, err := f.Data(ti.Name)
	if err != nil {
		return nil, err
	}
	if to == ti.Type {
		return b, nil
	}
	switch ti.Type {
	case tensor.F32, tensor.F16, tensor.BF16:
	default:
		if ti.Type == tensor.I32 || !ti.Type.Known() {
			return nil, fmt.Errorf("cannot convert %v to %v", ti.Type, to)
		}
		if !requantize {
			return nil, fmt.Errorf("it is already %v; requantizing loses accuracy (allow it with AllowRequantize, toy quantize --allow-requantize)", ti.Type)
		}
	}
	x, err := f.Dequantize(ti.Name)
	if err != nil {
		return nil, err
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("element %d is %v: only finite weights can be quantized (llama.cpp's loader refuses the file too)", i, v)
		}
	}
	cols := int(ti.Dims[0])
	if weights == nil {
		return tensor.QuantizeRows(to, x, cols)
	}
	// Each expert's rows with its own columns' importance.
	experts := len(weights) / cols
	per := len(x) / experts
	var out []byte
	for e := range experts {
		q, err := tensor.QuantizeRowsWeighted(to, x[e*per:(e+1)*per], cols, weights[e*cols:(e+1)*cols])
		if err != nil {
			return nil, err
		}
		out = append(out, q...)
	}
	return out, nil
}

// layerOf returns the layer number of a "blk.N.…" tensor name, and −1 for
// the others (where llama.cpp's sscanf("blk.%d.") leaves its −1).
func layerOf(name string) int {
	if l, ok := blockNumber(name); ok {
		return l
	}
	return -1
}

// blockNumber reads N from a name that starts "blk.N" (as C's sscanf
// "blk.%d" does: optional spaces, sign and digits).
func blockNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, false
	}
	rest = strings.TrimLeft(rest, " \t\n\v\f\r")
	sign := 1
	if r, ok := strings.CutPrefix(rest, "-"); ok {
		sign, rest = -1, r
	} else {
		rest = strings.TrimPrefix(rest, "+")
	}
	n, digits := 0, 0
	for ; digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9'; digits++ {
		n = 10*n + int(rest[digits]-'0')
	}
	return sign * n, digits > 0
}

// shapeOf returns ti's row-major shape with the trailing dimensions of 1
// dropped, as ggml writes tensor infos (ggml_n_dims of them).
func shapeOf(ti TensorInfo) []int {
	return ti.Shape()[len(ti.Dims)-nDims(ti):]
}

// nDims is ggml_n_dims: the dimensions up to the last one above 1.
func nDims(ti TensorInfo) int {
	for i := len(ti.Dims) - 1; i >= 1; i-- {
		if ti.Dims[i] > 1 {
			return i + 1
		}
	}
	return 1
}

// quantizable reports whether llama.cpp's quantizer converts the tensor at
// all: a matrix or stack of them whose name ends in "weight", and not a
// norm, a MoE router, a position embedding or token types (nor one of the
// small tensors of architectures toy does not run: conv1d, RWKV's
// time-mix, T5's relative bias, vision towers, …).
func quantizable(ti TensorInfo) bool {
	name := ti.Name
	if nDims(ti) < 2 || !strings.HasSuffix(name, "weight") {
		return false
	}
	if name == "position_embd.weight" || name == "token_types.weight" {
		return false
	}
	for _, s := range []string{"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
		"per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
		"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight",
		"time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
		"time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
		"time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_",
		".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd"} {
		if strings.Contains(name, s) {
			return false
		}
	}
	return true
}

// category is the role of a matrix that the mix rules look at.
type category int

const (
	catOther category = iota
	catTokenEmbd
	catOutput
	catAttnQ
	catAttnK
	catAttnV   // attn_v, and the fused attn_qkv and attn_kv_b, which hold the values
	catAttnOut // attn_output
	catFFNUp
	catFFNGate
	catFFNDown // ffn_down, ffn_down_exps, ffn_down_shexp
)

// categoryOf names a tensor's role as llama.cpp's tensor_get_category does,
// by substrings of its name, first match winning.
func categoryOf(name string) category {
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight", name == "per_layer_token_embd.weight":
		return catTokenEmbd
	case strings.Contains(name, "attn_qkv.weight"), strings.Contains(name, "attn_kv_b.weight"),
		strings.Contains(name, "attn_v.weight"):
		return catAttnV
	case strings.Contains(name, "attn_k.weight"):
		return catAttnK
	case strings.Contains(name, "attn_q.weight"):
		return catAttnQ
	case strings.Contains(name, "attn_output.weight"):
		return catAttnOut
	case strings.Contains(name, "ffn_up"):
		return catFFNUp
	case strings.Contains(name, "ffn_gate"):
		return catFFNGate
	case strings.Contains(name, "ffn_down"):
		return catFFNDown
	}
	return catOther
}

// mixFacts are what the mix rules know of the model, and their counters:
// rules by layer position count the value and down projections in the
// order the tensors are written.
type mixFacts struct {
	arch       string
	layers     int  // block_count
	experts    int  // expert_count (0 for a dense model)
	gqa        int  // heads per KV head, in layer 0 (0 when head_count_kv is 0)
	is70B      bool // llama.cpp's 70B class (Llama 2/3 70B, Qwen2 72B): a bigger attn_v
	tied       bool // no output.weight: the token embeddings are the head
	nAttnV     int  // value projections in the file
	iAttnV     int  // value projections seen so far
	iFFNDown   int
	iFFNGateUp [2]int // ffn_gate, ffn_up seen so far (layer checks only)
	hasImatrix bool
	outputType *tensor.DType // QuantizeOptions.OutputType
}

// readMixFacts reads the hyperparameters the rules use, as llama.cpp's
// loader does: head counts may be per-layer arrays (layer 0 counts), and
// head_count_kv defaults to head_count.
func readMixFacts(f *File) (*mixFacts, error) {
	arch, err := f.Architecture()
	if err != nil {
		return nil, err
	}
	m := &mixFacts{arch: arch}
	if m.layers, err = f.Int(arch + ".block_count"); err != nil {
		return nil, err
	}
	if f.Has(arch + ".expert_count") {
		if m.experts, err = f.Int(arch + ".expert_count"); err != nil {
			return nil, err
		}
	}
	first := func(key string) (int, bool, error) {
		if !f.Has(key) {
			return 0, false, nil
		}
		if n, err := f.Int(key); err == nil {
			return n, true, nil
		}
		a, err := f.Int32s(key)
		if err != nil || len(a) == 0 {
			return 0, false, fmt.Errorf("%s: %w", key, ErrWrongType)
		}
		return int(a[0]), true, nil
	}
	heads, _, err := first(arch + ".attention.head_count")
	if err != nil {
		return nil, err
	}
	kv, ok, err := first(arch + ".attention.head_count_kv")
	if err != nil {
		return nil, err
	}
	if !ok {
		kv = heads
	}
	if kv != 0 {
		m.gqa = heads / kv
	}
	switch arch {
	case "llama":
		m.is70B = m.layers == 80 && heads != kv && m.experts != 8
	case "qwen2", "olmo", "deci":
		m.is70B = m.layers == 80
	case "jais2":
		m.is70B = m.layers == 68
	}
	m.tied = true
	for _, ti := range f.Tensors {
		if ti.Name == "output.weight" {
			m.tied = false
		}
	}
	return m, nil
}

// count counts the value projections among all tensors (quantizable or
// not, as llama.cpp counts them).
func (m *mixFacts) count(infos []TensorInfo) {
	for _, ti := range infos {
		if categoryOf(ti.Name) == catAttnV {
			m.nAttnV++
		}
	}
}

// moreBits is llama.cpp's use_more_bits: the first and last eighth of n
// layers, and every third layer between.
func moreBits(i, n int) bool { return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 }

// layerInfo returns the layer of a down/gate/up projection and the number
// of layers: in a dense model the count of such tensors seen so far, in a
// mixture of experts the number in its name.
func (m *mixFacts) layerInfo(seen int, name string) (int, error) {
	if m.experts <= 1 {
		return seen, nil
	}
	l, ok := blockNumber(name)
	if !ok {
		return 0, fmt.Errorf("cannot tell the layer of %s", name)
	}
	if l < 0 || l >= m.layers {
		return 0, fmt.Errorf("layer %d of %s is not in [0, %d)", l, name, m.layers)
	}
	return l, nil
}

// choose returns the type of quantizable tensor ti under opt (base type
// base), and whether it is a fallback from the one the rules chose. As in
// llama.cpp: the token embeddings' and the head's types when given, else
// for a quantized file type the first override that matches, else the
// mix's rules (unless Pure), then the fallbacks.
func (m *mixFacts) choose(ti TensorInfo, opt QuantizeOptions, base tensor.DType) (tensor.DType, bool, error) {
	cat := categoryOf(ti.Name)
	override, manual := overrideOf(opt, ti.Name)
	if opt.TokenEmbeddingType != nil && cat == catTokenEmbd && !(ti.Name == "per_layer_token_embd.weight" && manual) {
		return *opt.TokenEmbeddingType, false, nil
	}
	if opt.OutputType != nil && cat == catOutput {
		return *opt.OutputType, false, nil
	}
	t := base
	if base.BlockSize() == 1 { // F32, F16, BF16: no rules, no fallbacks
		return t, false, nil
	}
	if manual {
		t = override
	} else if !opt.Pure {
		var err error
		if t, err = m.llamaType(ti, opt.FileType, base); err != nil {
			return 0, false, err
		}
	}
	cols := int(ti.Dims[0])
	if cols%t.BlockSize() == 0 {
		return t, false, nil
	}
	fallback := map[tensor.DType]tensor.DType{tensor.IQ4_XS: tensor.IQ4_NL, tensor.Q2_K: tensor.Q4_0, tensor.Q3_K: tensor.Q4_0,
		tensor.Q4_K: tensor.Q5_0, tensor.Q5_K: tensor.Q5_1, tensor.Q6_K: tensor.Q8_0}
	if f, ok := fallback[t]; ok {
		t = f
	}
	if cols%t.BlockSize() != 0 {
		t = tensor.F16
	}
	return t, true, nil
}

// overrideOf returns the type the first of opt's overrides that matches
// name gives it, and whether one does.
func overrideOf(opt QuantizeOptions, name string) (tensor.DType, bool) {
	for _, o := range opt.TensorTypes {
		if o.Pattern.MatchString(name) {
			return o.Type, true
		}
	}
	return 0, false
}

// llamaType applies llama.cpp's rules for the file types toy writes
// (llama_tensor_get_type_impl).
func (m *mixFacts) llamaType(ti TensorInfo, ft FileType, t tensor.DType) (tensor.DType, error) {
	name, cat := ti.Name, categoryOf(ti.Name)
	switch {
	case cat == catOutput || cat == catTokenEmbd && m.tied:
		// The head: Q6_K, or Q8_0 in a Q8_0 or MXFP4_MOE file, or when its
		// rows are not whole blocks of the base type (or Falcon's); tied
		// embeddings take the head's type when it is given.
		if m.outputType != nil {
			return *m.outputType, nil
		}
		if ft == FileMXFP4_MOE || m.arch == "falcon" || int(ti.Dims[0])%t.BlockSize() != 0 {
			return tensor.Q8_0, nil
		}
		if t != tensor.Q8_0 {
			return tensor.Q6_K, nil
		}
	case ft == FileMXFP4_MOE:
		// The experts' stacks (3-D; in BailingMoE3, whose attention has
		// 3-D projections too, only the feed-forward ones) MXFP4, the
		// other matrices Q8_0; none of the rules below.
		stack := len(ti.Dims) > 2 && ti.Dims[2] > 1
		if m.arch == "bailingmoe3" && cat != catFFNUp && cat != catFFNGate && cat != catFFNDown {
			stack = false
		}
		if !stack {
			t = tensor.Q8_0
		}
	case cat == catTokenEmbd:
		// Untied token embeddings keep the base type.
	case cat == catAttnV:
		gqa4 := m.gqa >= 4
		switch {
		case ft == FileQ2_K && gqa4:
			t = tensor.Q4_K
		case ft == FileQ2_K:
			t = tensor.Q3_K
		case ft == FileQ3_K_M && m.iAttnV < 2: // the first two layers
			t = tensor.Q5_K
		case ft == FileQ3_K_M:
			t = tensor.Q4_K
		case ft == FileQ3_K_L:
			t = tensor.Q5_K
		case (ft == FileIQ4_NL || ft == FileIQ4_XS) && gqa4:
			t = tensor.Q5_K
		case (ft == FileQ4_K_M || ft == FileQ5_K_M) && moreBits(m.iAttnV, m.nAttnV):
			t = tensor.Q6_K
		case ft == FileQ4_K_S && m.iAttnV < 4:
			t = tensor.Q5_K
		}
		if m.is70B && (t == tensor.Q3_K || t == tensor.Q4_K) {
			t = tensor.Q5_K // 8 query heads share each value head: a bigger attn_v costs little
		}
		if m.experts == 8 {
			t = tensor.Q8_0
		}
		m.iAttnV++
	case cat == catAttnK:
		if m.experts == 8 {
			t = tensor.Q8_0
		}
	case cat == catFFNDown:
		i, err := m.layerInfo(m.iFFNDown, name)
		if err != nil {
			return 0, err
		}
		n := m.layers
		falcon := m.arch == "falcon"
		switch {
		case ft == FileQ2_K:
			t = tensor.Q3_K
		case ft == FileQ3_K_M && i < n/16:
			t = tensor.Q5_K
		case ft == FileQ3_K_M && (!falcon || moreBits(i, n)):
			t = tensor.Q4_K
		case ft == FileQ3_K_M:
			t = tensor.Q3_K
		case ft == FileQ3_K_L && falcon:
			t = tensor.Q4_K
		case ft == FileQ3_K_L:
			t = tensor.Q5_K
		case ft == FileQ4_K_M && falcon && i < n/16:
			t = tensor.Q6_K
		case ft == FileQ4_K_M && falcon && moreBits(i, n):
			t = tensor.Q5_K
		case ft == FileQ4_K_M && falcon:
			t = tensor.Q4_K
		case ft == FileQ4_K_M:
			if moreBits(i, n) {
				t = tensor.Q6_K
			}
		case i < n/8 && (ft == FileIQ4_NL || ft == FileIQ4_XS) && !m.hasImatrix:
			t = tensor.Q5_K
		case ft == FileQ5_K_M && moreBits(i, n):
			t = tensor.Q6_K
		case ft == FileQ4_K_S && !falcon && i < n/8:
			t = tensor.Q5_K
		case (ft == FileQ4_0 || ft == FileQ5_0) && m.hasImatrix && i < n/8:
			// With an importance matrix, the first down projections one
			// step up (Q4_1, Q5_1), which llama.cpp keeps from going wild.
			t = map[FileType]tensor.DType{FileQ4_0: tensor.Q4_1, FileQ5_0: tensor.Q5_1}[ft]
		}
		m.iFFNDown++
	case cat == catAttnOut:
		switch {
		case m.arch == "falcon":
			if ft == FileQ3_K_L {
				t = tensor.Q4_K
			}
		case m.experts == 8:
			switch ft {
			case FileQ2_K, FileQ3_K_S, FileQ3_K_M, FileIQ4_NL, FileQ4_K_S, FileQ4_K_M, FileIQ4_XS:
				t = tensor.Q5_K
			}
		case ft == FileQ2_K:
			t = tensor.Q3_K
		case ft == FileQ3_K_M:
			t = tensor.Q4_K
		case ft == FileQ3_K_L:
			t = tensor.Q5_K
		}
	case cat == catFFNGate, cat == catFFNUp:
		// No rule for these file types, but the layer is still checked.
		k := 0
		if cat == catFFNUp {
			k = 1
		}
		if _, err := m.layerInfo(m.iFFNGateUp[k], name); err != nil {
			return 0, err
		}
		m.iFFNGateUp[k]++
	}
	return t, nil
}
