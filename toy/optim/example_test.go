package optim_test

import (
	"fmt"

	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/tensor"
)

// AdamW minimizes loss = (θ − 3)², whose gradient is 2(θ − 3), from θ = 0.
func ExampleAdamW() {
	theta := tensor.FromFloat32([]float32{0}, 1).SetRequiresGrad(true)
	minus3 := tensor.FromFloat32([]float32{-3}, 1)
	params := []optim.Param{{Name: "theta", T: theta}} // Decay false: no weight decay
	opt := optim.NewAdamW()
	lr := optim.Cosine{Max: 0.05, Min: 0, Total: 200} // no warm-up

	for step := 0; step <= 200; step++ {
		if step%50 == 0 {
			fmt.Printf("step %3d  θ = %.2f\n", step, theta.Data()[0])
		}
		tape := tensor.NewTape()
		tensor.Record(tape)
		d := tensor.Add(theta, minus3)
		loss := tensor.Sum(tensor.Mul(d, d))
		tensor.Record(nil)
		tape.Backward(loss)
		opt.Update(params, lr.LR(step)) // applies θ's gradient, then clears it
	}
	// Output:
	// step   0  θ = 0.00
	// step  50  θ = 2.19
	// step 100  θ = 3.03
	// step 150  θ = 3.00
	// step 200  θ = 3.00
}

// Cosine warms up over 10 steps, then decays from Max at step 10 to Min at 100.
func ExampleCosine() {
	s := optim.Cosine{Max: 1e-3, Min: 1e-4, Warmup: 10, Total: 100}
	for _, step := range []int{0, 5, 10, 55, 100, 200} {
		fmt.Printf("step %d: %.2e\n", step, s.LR(step))
	}
	// Output:
	// step 0: 1.00e-04
	// step 5: 6.00e-04
	// step 10: 1.00e-03
	// step 55: 5.50e-04
	// step 100: 1.00e-04
	// step 200: 1.00e-04
}
