// Importance matrices: which input columns of each weight matrix the model
// leans on, measured on a text, for quantizing with (toy quantize
// --imatrix), as llama-imatrix measures it.

package toy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// ImatrixOptions say how Model.Imatrix reads its text.
type ImatrixOptions struct {
	// Chunk is the number of tokens each chunk of the text holds (default
	// 512, llama-imatrix's context); each chunk is run from an empty
	// cache, its first token made BOS when the tokenizer adds one.
	Chunk int
	// Chunks is the most chunks to run (0: all the text has).
	Chunks int
	// ProcessOutput also measures the head, output.weight (llama-imatrix
	// --process-output); by default only the blocks' matrices.
	ProcessOutput bool
	// Dataset names the text in the file (imatrix.datasets).
	Dataset string
	// Progress, when set, is called after each chunk.
	Progress func(done, total int)
}

// Imatrix runs the model over ids chunk by chunk and returns, for every
// weight matrix of its blocks, the sum of each input column's square over
// the activation rows multiplied by it, and their count — per expert for
// the experts' stacks —, as llama-imatrix does: a dense matrix counts only
// products of at least 16 rows (a batch, not a decoding step), an
// expert's every row routed to it. The matrices are told by their tensor
// names in the file, which must be viewed in place (as Load leaves them).
//
// It runs on the host backend that is active (a device backend's
// products are not seen), which it wraps while it runs: other work must
// not run ops meanwhile.
func (m *Model) Imatrix(ids []int32, opt ImatrixOptions) (*gguf.Imatrix, error) {
	if opt.Chunk <= 0 {
		opt.Chunk = 512
	}
	if opt.Chunk > m.ContextLength() {
		return nil, fmt.Errorf("imatrix: chunks of %d tokens exceed the model's context of %d", opt.Chunk, m.ContextLength())
	}
	chunks := len(ids) / opt.Chunk
	if opt.Chunks > 0 {
		chunks = min(chunks, opt.Chunks)
	}
	if chunks == 0 {
		return nil, fmt.Errorf("imatrix: %d tokens make no chunk of %d (a longer text, or a smaller chunk)", len(ids), opt.Chunk)
	}
	c, err := newImatrixCollector(m.File, opt.ProcessOutput)
	if err != nil {
		return nil, err
	}
	prev := tensor.ActiveBackend()
	tensor.SetBackend(imatrixBackend{prev, c})
	defer tensor.SetBackend(prev)

	for i := range chunks {
		chunk := slices.Clone(ids[i*opt.Chunk : (i+1)*opt.Chunk])
		if m.Tokenizer != nil && m.Tokenizer.AddBOS() && m.Tokenizer.BOS() >= 0 {
			chunk[0] = m.Tokenizer.BOS()
		}
		sess := engine.NewSession(m.Net, opt.Chunk)
		if opt.ProcessOutput {
			_, err = sess.All(chunk)
		} else {
			_, err = sess.Next(chunk)
		}
		if err != nil {
			return nil, fmt.Errorf("imatrix: chunk %d: %w", i, err)
		}
		if opt.Progress != nil {
			opt.Progress(i+1, chunks)
		}
	}
	im := &gguf.Imatrix{Sums: c.sums, Counts: c.counts, ChunkCount: chunks, ChunkSize: opt.Chunk}
	if opt.Dataset != "" {
		im.Datasets = []string{opt.Dataset}
	}
	if len(im.Sums) == 0 {
		return nil, fmt.Errorf("imatrix: no weight matrix of the file was seen in a product (were the weights copied at load?)")
	}
	return im, nil
}

// imatrixBackend is a backend that shows every product to a collector
// before computing it. It hides the wrapped backend's optional interfaces
// (fused experts, device residency), so that every product is a MatMul.
type imatrixBackend struct {
	tensor.Backend
	c *imatrixCollector
}

func (b imatrixBackend) MatMul(out, x, w *tensor.Tensor) {
	b.c.observe(x, w)
	b.Backend.MatMul(out, x, w)
}

// imatrixCollector sums the squares of the rows multiplied by each of a
// file's weight matrices, found by the address of their bytes.
type imatrixCollector struct {
	spans  []weightSpan // sorted by start
	sums   map[string][]float32
	counts map[string][]float32
}

// weightSpan is where a matrix's bytes lie in the file's memory.
type weightSpan struct {
	start, end uintptr
	name       string
	experts    int // the stack's first dimension; 1 for a matrix
	cols       int
}

func newImatrixCollector(f *gguf.File, output bool) (*imatrixCollector, error) {
	c := &imatrixCollector{sums: map[string][]float32{}, counts: map[string][]float32{}}
	for _, ti := range f.Tensors {
		if !strings.HasPrefix(ti.Name, "blk.") && !(output && ti.Name == "output.weight") || len(ti.Dims) < 2 || ti.Size == 0 {
			continue
		}
		b, _, err := f.Data(ti.Name)
		if err != nil {
			return nil, fmt.Errorf("imatrix: %w", err)
		}
		experts := 1
		if len(ti.Dims) > 2 {
			experts = int(ti.Dims[2])
		}
		start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		c.spans = append(c.spans, weightSpan{start, start + uintptr(len(b)), ti.Name, experts, int(ti.Dims[0])})
	}
	sort.Slice(c.spans, func(i, j int) bool { return c.spans[i].start < c.spans[j].start })
	return c, nil
}

// observe adds x's rows to the sums of the matrix w views, if it is one of
// the file's.
func (c *imatrixCollector) observe(x, w *tensor.Tensor) {
	var at uintptr
	if w.DType() == tensor.F32 {
		at = uintptr(unsafe.Pointer(unsafe.SliceData(w.Data())))
	} else {
		at = uintptr(unsafe.Pointer(unsafe.SliceData(w.Bytes())))
	}
	if at == 0 {
		return
	}
	i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].end > at })
	if i == len(c.spans) || at < c.spans[i].start {
		return // not a weight of the file: an activation, a copy
	}
	s := c.spans[i]
	expert := int(at-s.start) / int((s.end-s.start)/uintptr(s.experts))
	if s.experts == 1 && x.Rows() < 16 || x.Cols() != s.cols {
		return
	}
	sums, counts := c.sums[s.name], c.counts[s.name]
	if sums == nil {
		sums, counts = make([]float32, s.experts*s.cols), make([]float32, s.experts)
		c.sums[s.name], c.counts[s.name] = sums, counts
	}
	acc := sums[expert*s.cols : (expert+1)*s.cols]
	for r := range x.Rows() {
		for j, v := range x.Row(r) {
			acc[j] += v * v
		}
	}
	counts[expert] += float32(x.Rows())
}
