//go:build !linux

package gguf

// prefetch is a no-op here: the pages come in on first use.
func prefetch([]byte) {}
