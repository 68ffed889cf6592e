// Opening and writing ViT GGUF files.

package vit

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Open loads the ViT classifier in the GGUF file at path. The weights view
// the memory-mapped file: Close releases it.
func Open(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	m, err := Load(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	m.file = f
	return m, nil
}

// Close releases the file Open mapped; the model is unusable afterwards. It
// does nothing for a model built otherwise.
func (m *Model) Close() error {
	if m.file == nil {
		return nil
	}
	f := m.file
	m.file = nil
	return f.Close()
}

// GGUF returns a writer holding the model's configuration and weights, every
// matrix whose rows fit t's blocks stored as t (F32, F16, BF16, Q8_0, …),
// the rest — norms, biases, the [CLS] token, a patch kernel whose rows of P
// pixels t's blocks do not divide — as F32, as llama.cpp's quantizer keeps
// them. The patch kernel is written [D, C, P, P], as llama.cpp's CLIP files
// hold it.
func (m *Model) GGUF(t tensor.DType) (*gguf.Writer, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	c := m.Config
	w := gguf.NewWriter()
	c.SetMetadata(w)
	w.SetUint32("general.file_type", map[tensor.DType]uint32{tensor.F32: 0, tensor.F16: 1, tensor.Q8_0: 7, tensor.BF16: 32}[t])
	for _, n := range m.Weights() {
		shape := c.fileShape(n)
		dt := tensor.F32
		switch rowLen := shape[len(shape)-1]; {
		case len(shape) < 2:
		case rowLen%t.BlockSize() == 0:
			dt = t
		}
		if err := w.AddFloat32(n.Name, dt, n.T.Float32s(), shape...); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// fileShape is the shape weight n has in a file: the model holds the patch
// kernel [D, C, P, P] as [D, C·P·P].
func (c Config) fileShape(n nn.Named) []int {
	if n.Name == "v.patch_embd.weight" {
		return []int{c.Embed, Channels, c.PatchSize, c.PatchSize}
	}
	return n.T.Shape()
}

// WriteGGUF writes the model to path (see GGUF for the types).
func (m *Model) WriteGGUF(path string, t tensor.DType) error {
	w, err := m.GGUF(t)
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}
