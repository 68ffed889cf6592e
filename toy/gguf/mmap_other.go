//go:build !unix

// Systems without mmap read the whole file instead.

package gguf

import (
	"io"
	"os"
)

func mapFile(fd *os.File, size int64) ([]byte, func() error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(fd, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
