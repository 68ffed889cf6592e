// Batched decoding (engine.NextBatch) against each sequence alone.

package toy_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
)

// TestBatchInvariance decodes three sequences of different lengths in one
// batch and checks, for every gate model that can run a batch, that each
// sequence's logits are bit for bit those it gets alone: over a prompt
// chunk, then over single tokens. The architectures whose layers cannot
// run a batch (multi-head latent attention, recurrent layers) must say so
// by panicking: toy serve then decodes their slots one by one.
func TestBatchInvariance(t *testing.T) {
	cannot := map[string]bool{"deepseek2": true, "lfm2": true, "lfm2moe": true, "qwen35": true, "qwen35moe": true, "qwen3next": true}
	for _, s := range testmodel.Specs() {
		if s.DType == 1 { // F16: as F32 for this purpose
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), s.File())
			if _, err := testmodel.Write(s, path); err != nil {
				t.Fatal(err)
			}
			m, err := toy.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			V := int32(m.Net.VocabSize())
			prompts := [][]int32{{1, 5, 9, 2, 7}, {3, 4}, {8, 6, 2, 11, 13, 5, 4}}
			alone := make([]*engine.Session, 3)
			together := make([]*engine.Session, 3)
			for i, p := range prompts {
				for j := range p {
					p[j] %= V
				}
				alone[i], together[i] = m.NewSession(32), m.NewSession(32)
			}
			func() {
				defer func() {
					if p := recover(); p != nil && !cannot[s.Arch] {
						t.Errorf("cannot batch: %v", p)
					}
				}()
				steps := [][][]int32{prompts, {{4}, {9}, {1}}, {{2}, {2}, {2}}, {{7, 3}, {5}, {10}}}
				for n, ids := range steps {
					got, err := engine.NextBatch(m.Net, together, ids)
					if err != nil {
						t.Fatal(err)
					}
					for i := range ids {
						want, err := alone[i].Next(ids[i])
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(got[i], want) {
							t.Fatalf("step %d, sequence %d: batched logits differ from alone (first %v vs %v)", n, i, got[i][:3], want[:3])
						}
					}
				}
				if cannot[s.Arch] {
					t.Errorf("%s ran a batch: take it off the list", s.Arch)
				}
			}()
		})
	}
}
