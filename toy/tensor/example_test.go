package tensor_test

import (
	"fmt"

	"github.com/toyml/toy/toy/tensor"
)

func ExampleMatMul() {
	// MatMul(x, w) is x·wᵀ: w holds one row per output feature.
	x := tensor.FromFloat32([]float32{
		1, 2, 3,
		4, 5, 6,
	}, 2, 3) // [T=2, K=3]
	w := tensor.FromFloat32([]float32{
		1, 0, 0, // picks feature 0
		0, 1, 1, // adds features 1 and 2
	}, 2, 3) // [N=2, K=3]
	y := tensor.MatMul(x, w) // [T=2, N=2]
	fmt.Println(y.Shape(), y.Data())
	fmt.Println(y)
	// Output:
	// [2 2] [1 5 4 11]
	// Tensor[2 2] F32 [1 5 4 11]
}

func ExampleSoftmax() {
	x := tensor.FromFloat32([]float32{
		0, 0, 0,
		1, 2, 3,
	}, 2, 3)
	p := tensor.Softmax(x, -1) // past < 0: every row sees every column
	fmt.Printf("%.4f\n%.4f\n", p.Row(0), p.Row(1))
	c := tensor.Softmax(x, 0) // past = 0: causal, row t sees columns 0 … t
	fmt.Printf("%.4f\n%.4f\n", c.Row(0), c.Row(1))
	// Output:
	// [0.3333 0.3333 0.3333]
	// [0.0900 0.2447 0.6652]
	// [1.0000 0.0000 0.0000]
	// [0.2689 0.7311 0.0000]
}

func ExampleRMSNorm() {
	x := tensor.FromFloat32([]float32{
		1, 2, 3, // rms = √(14/3) = 2.1602
		-2, 2, 0, // rms = √(8/3) = 1.6330
	}, 2, 3)
	w := tensor.FromFloat32([]float32{1, 1, 2}, 3) // a gain per feature
	y := tensor.RMSNorm(x, w, 1e-6)
	fmt.Printf("%.4f\n%.4f\n", y.Row(0), y.Row(1))
	// Output:
	// [0.4629 0.9258 2.7775]
	// [-1.2247 1.2247 0.0000]
}

func ExampleTape_Backward() {
	// loss = Σ x·wᵀ = 1·4 + 2·5 + 3·6 = 32, so ∂loss/∂x = w and ∂loss/∂w = x.
	x := tensor.FromFloat32([]float32{1, 2, 3}, 1, 3).SetRequiresGrad(true)
	w := tensor.FromFloat32([]float32{4, 5, 6}, 1, 3).SetRequiresGrad(true)

	tape := tensor.NewTape()
	tensor.Record(tape)
	loss := tensor.Sum(tensor.MatMul(x, w))
	tensor.Record(nil)
	tape.Backward(loss)

	fmt.Println("loss", loss.Data())
	fmt.Println("dx", x.Grad().Data())
	fmt.Println("dw", w.Grad().Data())
	// Output:
	// loss [32]
	// dx [4 5 6]
	// dw [1 2 3]
}

func ExampleCrossEntropy() {
	// Two positions over a vocabulary of 3: uniform logits cost ln 3 = 1.0986,
	// a confident right guess costs little.
	logits := tensor.FromFloat32([]float32{
		0, 0, 0,
		0, 0, 10,
	}, 2, 3)
	loss := tensor.CrossEntropy(logits, []int32{1, 2})
	fmt.Printf("%.4f\n", loss.Data()[0]) // (1.0986 + 0.0001) / 2
	// Output:
	// 0.5494
}

// A mixture of experts' decode step, routed: each token's 2 best of 3
// experts, their products, and the outputs weighted by the scores.
func ExampleTopK() {
	scores := tensor.FromFloat32([]float32{0.5, 0.2, 0.3}, 1, 3)
	ids := tensor.TopK(scores, 2, 1, 1) // experts 0 and 2, in ascending order
	experts := tensor.FromFloat32([]float32{
		1, 0, 0, 1, // expert 0: identity
		2, 0, 0, 2, // expert 1: doubles
		0, 1, 1, 0, // expert 2: swaps
	}, 3, 2, 2)
	x := tensor.FromFloat32([]float32{1, 10}, 1, 2)
	h := tensor.MatMulID(x, experts, ids)  // [2, 2]: x·W_0ᵀ, x·W_2ᵀ
	w := tensor.GatherColumns(scores, ids) // [1, 2]: 0.5, 0.3
	fmt.Println(ids.Int32s(), h.Data(), w.Data())
	fmt.Println(tensor.WeightedSum(h, w).Data()) // 0.5·[1 10] + 0.3·[10 1]
	fmt.Println(tensor.ConcatColumns(x, w).Data())
	// Output:
	// [0 2] [1 10 10 1] [0.5 0.3]
	// [3.5 5.3]
	// [1 10 0.5 0.3]
}

// Zeros makes a buffer that a device backend keeps in its own memory from
// the start (a KV cache); on the host it is New.
func ExampleZeros() {
	cache := tensor.Zeros(4, 2)
	rows := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
	tensor.SetRows(cache, 1, rows)
	fmt.Println(cache.Data())
	// Output: [0 0 1 2 3 4 0 0]
}
