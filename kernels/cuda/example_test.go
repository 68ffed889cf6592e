package cuda_test

import (
	"errors"
	"fmt"

	"github.com/toyml/toy/kernels"
	"github.com/toyml/toy/kernels/cuda"
	"github.com/toyml/toy/toy/tensor"
)

// Load opens the GPU, or fails with a *kernels.NativeCallError whose Missing
// and Hint say what is missing (the driver, a GPU, cuBLAS) and what to do;
// a program then stays on the CPU.
func ExampleLoad() {
	b, err := cuda.Load()
	if err == nil {
		prev := tensor.ActiveBackend()
		tensor.SetBackend(b) // every op now runs on the GPU
		defer tensor.SetBackend(prev)
	}
	var nce *kernels.NativeCallError
	fmt.Println(err == nil || errors.As(err, &nce))
	// Output:
	// true
}
