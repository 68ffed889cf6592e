package nn_test

import (
	"bytes"
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

func ExampleLinear_Forward() {
	// y = x·Wᵀ + b, from 3 features to 2.
	l := &nn.Linear{
		W: tensor.FromFloat32([]float32{
			1, 1, 1, // y0 = x0 + x1 + x2
			0, 0, 2, // y1 = 2·x2
		}, 2, 3), // [out, in]
		B: tensor.FromFloat32([]float32{0, 10}, 2),
	}
	x := tensor.FromFloat32([]float32{
		1, 2, 3,
		-1, 0, 1,
	}, 2, 3) // [T, in]
	y := l.Forward(x) // [T, out]
	fmt.Println(y.Shape(), y.Data())
	// Output:
	// [2 2] [6 16 0 12]
}

func ExampleEmbedding_Forward() {
	e := &nn.Embedding{W: tensor.FromFloat32([]float32{
		0, 0, // token 0
		1, 1, // token 1
		2, 4, // token 2
	}, 3, 2)} // [V, D]
	x := e.Forward([]int32{2, 0, 2}) // [T, D]
	fmt.Println(x.Shape(), x.Data())
	// Output:
	// [3 2] [2 4 0 0 2 4]
}

func ExampleInit() {
	// The same seed gives the same weights.
	a := nn.NewInit(1).Linear(4, 8, 0.02, true)
	b := nn.NewInit(1).Linear(4, 8, 0.02, true)
	fmt.Println(a.W.Shape(), a.B.Shape(), a.W.Data()[0] == b.W.Data()[0])
	// Output:
	// [4 8] [4] true
}

// Load fills the tagged fields of a struct from the tensors of a GGUF file.
func ExampleLoad() {
	type FFN struct {
		Norm *nn.RMSNorm `gguf:"ffn_norm"`
		Up   *nn.Linear  `gguf:"ffn_up"`
	}
	w := gguf.NewWriter()
	w.AddFloat32("blk.0.ffn_norm.weight", tensor.F32, []float32{1, 1}, 2)
	w.AddFloat32("blk.0.ffn_up.weight", tensor.F32, []float32{1, 2, 3, 4, 5, 6}, 3, 2)
	var buf bytes.Buffer
	w.WriteTo(&buf)
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		panic(err)
	}

	ffn := &FFN{Norm: &nn.RMSNorm{Eps: 1e-5}} // a non-nil field is filled in place
	if err := nn.Load(f, "blk.0.", ffn); err != nil {
		panic(err)
	}
	for _, n := range nn.Collect("blk.0.", ffn) {
		fmt.Println(n.Name, n.T.Shape())
	}
	fmt.Println(ffn.Up.Forward(tensor.FromFloat32([]float32{1, 1}, 1, 2)).Data())
	// Output:
	// blk.0.ffn_norm.weight [2]
	// blk.0.ffn_up.weight [3 2]
	// [3 7 11]
}
