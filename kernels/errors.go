// Package kernels holds toy's native backends — cpu/, C kernels for the CPU,
// and cuda/, CUDA kernels for NVIDIA GPUs — and all/, which links both. Each
// backend registers itself with package tensor from its init function
// (tensor.RegisterBackend: "native" and "cuda"), so nothing in toy's stack
// imports it; a program has a backend when it imports its package:
//
//	import _ "github.com/toyml/toy/kernels/all"
//
// This package keeps the name NativeCallError, the error a native backend
// returns when its kernel library cannot be used, for code that imports it
// from here.
package kernels

import "github.com/toyml/toy/toy/tensor"

// NativeCallError reports that a native backend was asked for but its kernel
// library cannot be used; it is tensor.NativeCallError.
type NativeCallError = tensor.NativeCallError
