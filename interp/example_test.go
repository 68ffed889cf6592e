package interp_test

import (
	"context"
	"fmt"

	"github.com/toyml/toy/interp"
)

// Each Eval is a notebook cell; its final expression is the result, and
// toy's packages are preloaded.
func Example() {
	in, err := interp.New(interp.Options{}) // the process's stdin, stdout and stderr
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	r, _ := in.Eval(ctx, "1 + 2")
	fmt.Println(r.Values[0])

	r, err = in.Eval(ctx, `
x := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
y := tensor.MatMul(x, x) // x·xᵀ
fmt.Println(y.Data())
y`)
	if err != nil {
		panic(err)
	}
	b, _ := r.Bundle() // what a front end shows for the result
	fmt.Println(b.Text)
	// Output:
	// 3
	// [5 11 11 25]
	// Tensor[2 2] F32 [5 11 11 25]
}

// Describe names what went wrong in a cell, for the front end to show.
func ExampleDescribe() {
	in, err := interp.New(interp.Options{})
	if err != nil {
		panic(err)
	}
	for _, cell := range []string{"1 +", `panic("boom")`, "undefinedName"} {
		_, err := in.Eval(context.Background(), cell)
		name, _ := interp.Describe(err) // and the message to show with it
		fmt.Println(name)
	}
	// Output:
	// SyntaxError
	// panic
	// error
}
