package training

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/tensor"
)

type golden struct {
	ModelSHA256 string               `json:"model_sha256"`
	Loss        float64              `json:"loss"`
	Grads       map[string][]float64 `json:"grads"`
	Losses      []float64            `json:"losses"`
}

// Params lists the model's weights for AdamW, decaying matrices only.
func Params(c Case) []optim.Param {
	var ps []optim.Param
	for _, w := range c.Model.Weights() {
		ps = append(ps, optim.Param{Name: w.Name, T: w.T, Decay: len(w.T.Shape()) >= 2})
	}
	return ps
}

// TestAgainstPyTorch compares toy's loss, every parameter gradient and ten
// AdamW steps with the float64 PyTorch twin (torch_ref.py).
func TestAgainstPyTorch(t *testing.T) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var g golden
			b, err := os.ReadFile(filepath.Join("testdata", c.Name+".golden.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &g); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), c.Name+".gguf")
			if err := WriteGGUF(c, path); err != nil {
				t.Fatal(err)
			}
			if sum, _ := testmodel.FileSHA256(path); sum != g.ModelSHA256 {
				t.Fatalf("initial weights have SHA-256 %s; the golden was made from %s (toy's initialisation changed: rerun torch_ref.py)", sum, g.ModelSHA256)
			}
			batch, err := engine.NewBatch(BatchTokens(), Vocab, Pad)
			if err != nil {
				t.Fatal(err)
			}
			params := Params(c)

			// The loss and every gradient.
			tape := tensor.NewTape()
			tensor.Record(tape)
			loss := engine.Loss(c.Model, batch)
			tensor.Record(nil)
			tape.Backward(loss)
			if d := math.Abs(float64(loss.Data()[0]) - g.Loss); d > 1e-5 {
				t.Errorf("loss %.7f, PyTorch %.7f", loss.Data()[0], g.Loss)
			}
			worst, n := 0.0, 0
			for _, p := range params {
				want, ok := g.Grads[p.Name]
				if !ok {
					t.Fatalf("PyTorch has no parameter %s", p.Name)
				}
				if p.T.Grad() == nil {
					t.Fatalf("%s: no gradient", p.Name)
				}
				got := p.T.Grad().Data()
				for i := range want {
					d := math.Abs(float64(got[i]) - want[i])
					worst = max(worst, d)
					if d > 1e-5+1e-3*math.Abs(want[i]) {
						t.Fatalf("d loss / d %s[%d] = %.8f, PyTorch %.8f", p.Name, i, got[i], want[i])
					}
				}
				n++
				p.T.ZeroGrad()
			}
			if n != len(g.Grads) {
				t.Errorf("%d parameters, PyTorch has %d", n, len(g.Grads))
			}

			// Ten AdamW steps on the same batch.
			opt := optim.NewAdamW()
			var losses []float64
			for step := 0; step < len(g.Losses); step++ {
				r, err := engine.TrainStep(c.Model, params, opt, batch, LR, Clip)
				if err != nil {
					t.Fatal(err)
				}
				losses = append(losses, float64(r.Loss))
			}
			worstLoss := 0.0
			for i := range losses {
				worstLoss = max(worstLoss, math.Abs(losses[i]-g.Losses[i]))
				if math.Abs(losses[i]-g.Losses[i]) > 1e-4*max(1, math.Abs(g.Losses[i])) {
					t.Errorf("step %d: loss %.6f, PyTorch %.6f", i, losses[i], g.Losses[i])
				}
			}
			t.Logf("%s: loss %.6f (PyTorch %.6f); %d parameter gradients, max |Δ| %.1e; 10 AdamW losses %.4f → %.4f, max |Δ| %.1e",
				c.Name, loss.Data()[0], g.Loss, n, worst, losses[0], losses[len(losses)-1], worstLoss)
		})
	}
}
