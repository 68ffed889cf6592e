// Package all links toy's native backends, each registering itself with
// package tensor from its init function ("native" from kernels/cpu, "cuda"
// from kernels/cuda):
//
//	import _ "github.com/toyml/toy/kernels/all"
//
// Package toy does not import it (the surface chooses backends by name,
// through tensor.OpenBackend), so a program links the kernels by importing
// this package or the backends it wants. The interpreter imports it, and
// through it toysh, the Jupyter kernel, toy/cli, cmd/toy and every lab's
// main.go have both; a program that imports toy alone runs on pure Go (and
// TOY_BACKEND=native or cuda tells it what to import).
package all

import (
	_ "github.com/toyml/toy/kernels/cpu"
	_ "github.com/toyml/toy/kernels/cuda"
)
