// install-kernel: register toysh as a Jupyter kernel for the current user.
package main

import (
	"fmt"
	"os"

	"github.com/toyml/toy/kernelspec"
)

func installKernel() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := kernelspec.Install(exe)
	if err != nil {
		return err
	}
	fmt.Printf("installed the toy kernel in %s (runs %s)\n", dir, exe)
	return nil
}
