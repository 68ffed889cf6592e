// Applying LoRA adapters (llama.cpp's adapter GGUF format) to a loaded model.

package toy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// ErrAdapter marks an adapter file that does not fit the model.
var ErrAdapter = errors.New("bad LoRA adapter")

// LoadAdapter applies the LoRA adapter in path (general.type "adapter",
// adapter.type "lora", tensors "<base>.lora_a" [r, in] and "<base>.lora_b"
// [out, r], as llama.cpp reads them) to the model: every adapted projection
// then computes x·Wᵀ + scale·(α/r)·(x·Aᵀ)·Bᵀ. The adapter's tensors are copied,
// so its file can be closed.
func (m *Model) LoadAdapter(path string, scale float32) error {
	f, err := gguf.Open(path)
	if err != nil {
		return fmt.Errorf("adapter %s: %w", path, err)
	}
	defer f.Close()
	if t, _ := f.String("general.type"); t != "adapter" {
		return fmt.Errorf("%w: %s: general.type is %q, not \"adapter\"", ErrAdapter, path, t)
	}
	if t, _ := f.String("adapter.type"); t != "lora" {
		return fmt.Errorf("%w: %s: adapter.type is %q, not \"lora\"", ErrAdapter, path, t)
	}
	if a, _ := f.Architecture(); a != m.Arch {
		return fmt.Errorf("%w: %s is for %q, the model is %q", ErrAdapter, path, a, m.Arch)
	}
	alpha, err := f.Float32("adapter.lora.alpha")
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrAdapter, path, err)
	}
	linears := nn.FindLinears(m.Net, m.Net.Weights())
	applied := 0
	for _, ti := range f.Tensors {
		base, ok := strings.CutSuffix(ti.Name, ".weight.lora_a")
		if !ok {
			continue
		}
		l := linears[base]
		if l == nil {
			return fmt.Errorf("%w: %s adapts %s, which the model lacks", ErrAdapter, path, base)
		}
		a, err := floatTensor(f, base+".weight.lora_a")
		if err != nil {
			return err
		}
		b, err := floatTensor(f, base+".weight.lora_b")
		if err != nil {
			return err
		}
		r := a.Dim(0)
		if a.Dim(1) != l.W.Dim(1) || b.Dim(0) != l.W.Dim(0) || b.Dim(1) != r {
			return fmt.Errorf("%w: %s: %s has A %v and B %v for a weight %v", ErrAdapter, path, base, a.Shape(), b.Shape(), l.W.Shape())
		}
		l.LoRA = &nn.LoRA{A: a, B: b, Scale: scale * alpha / float32(r)}
		applied++
	}
	if applied == 0 {
		return fmt.Errorf("%w: %s holds no lora_a/lora_b tensors", ErrAdapter, path)
	}
	return nil
}

func floatTensor(f *gguf.File, name string) (*tensor.Tensor, error) {
	ti, err := f.Info(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAdapter, err)
	}
	if len(ti.Dims) != 2 {
		return nil, fmt.Errorf("%w: %s has %d dimensions", ErrAdapter, name, len(ti.Dims))
	}
	v, err := f.Dequantize(name)
	if err != nil {
		return nil, err
	}
	return tensor.FromFloat32(v, ti.Shape()...), nil
}
