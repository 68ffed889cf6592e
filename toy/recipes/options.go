// Options: what a recipe trains, how long, and at which learning rate.

package recipes

import "fmt"

// Options configures a recipe. NewOptions gives the defaults; the With
// methods return a changed copy.
type Options struct {
	Context     int     // T, sequence length (required)
	Batch       int     // B, sequences per step (4)
	Steps       int     // planned steps, for the schedule (1000)
	LR          float64 // peak learning rate (3e-4; LoRA 1e-3)
	MinLR       float64 // final learning rate of the cosine (LR/10)
	Warmup      int     // linear warm-up steps (Steps/20)
	WeightDecay float64 // AdamW λ on matrices (0.1)
	Clip        float64 // global gradient-norm clip (1.0; 0 = off)
	Seed        uint64  // initialisation, dropout and data order (1)

	// LoRA and QLoRA.
	Rank    int      // r (8)
	Alpha   float64  // α (16); updates are scaled by α/r
	Dropout float64  // dropout on the adapter's input (0)
	Targets []string // projections to adapt: q, k, v, o, qkv, gate, up, down (q, v)
}

// NewOptions returns the defaults for sequences of context tokens.
func NewOptions(context int) Options {
	return Options{Context: context, Batch: 4, Steps: 1000, LR: 3e-4, WeightDecay: 0.1, Clip: 1,
		Seed: 1, Rank: 8, Alpha: 16, Targets: []string{"q", "v"}}
}

func (o Options) WithBatch(b int) Options           { o.Batch = b; return o }
func (o Options) WithSteps(n int) Options           { o.Steps = n; return o }
func (o Options) WithLR(lr float64) Options         { o.LR = lr; return o }
func (o Options) WithMinLR(lr float64) Options      { o.MinLR = lr; return o }
func (o Options) WithWarmup(n int) Options          { o.Warmup = n; return o }
func (o Options) WithWeightDecay(d float64) Options { o.WeightDecay = d; return o }
func (o Options) WithClip(c float64) Options        { o.Clip = c; return o }
func (o Options) WithSeed(s uint64) Options         { o.Seed = s; return o }
func (o Options) WithRank(r int) Options            { o.Rank = r; return o }
func (o Options) WithAlpha(a float64) Options       { o.Alpha = a; return o }
func (o Options) WithDropout(p float64) Options     { o.Dropout = p; return o }
func (o Options) WithTargets(t ...string) Options   { o.Targets = t; return o }

// validate fills derived defaults and checks ranges.
func (o *Options) validate(lora bool) error {
	if o.Context <= 1 {
		return fmt.Errorf("recipes: context length %d; need at least 2", o.Context)
	}
	if o.Batch <= 0 || o.Steps <= 0 || !(o.LR > 0) || o.Clip < 0 || o.WeightDecay < 0 {
		return fmt.Errorf("recipes: batch %d, steps %d, lr %g, clip %g, weight decay %g", o.Batch, o.Steps, o.LR, o.Clip, o.WeightDecay)
	}
	if o.MinLR == 0 {
		o.MinLR = o.LR / 10
	}
	if o.Warmup == 0 {
		o.Warmup = o.Steps / 20
	}
	if lora {
		if o.Rank <= 0 || !(o.Alpha > 0) || o.Dropout < 0 || o.Dropout >= 1 || len(o.Targets) == 0 {
			return fmt.Errorf("recipes: LoRA rank %d, alpha %g, dropout %g, targets %v", o.Rank, o.Alpha, o.Dropout, o.Targets)
		}
		for _, t := range o.Targets {
			switch t {
			case "q", "k", "v", "o", "qkv", "gate", "up", "down":
			default:
				return fmt.Errorf("recipes: unknown LoRA target %q (q, k, v, o, qkv, gate, up, down)", t)
			}
		}
	}
	return nil
}
