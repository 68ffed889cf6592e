// --device: choosing where a command's ops run.

package cli

import (
	"flag"
	"fmt"

	"github.com/toyml/toy/toy"
)

// deviceFlag adds --device to fs.
func deviceFlag(fs *flag.FlagSet, dst *string) {
	fs.StringVar(dst, "device", "", "where ops run: cpu (native kernels, else pure Go) or cuda (an NVIDIA GPU); default: as TOY_BACKEND says")
}

// useDevice switches the backend for --device. cuda fails with the
// *toy.NativeCallError that says what is missing (the driver, a GPU,
// cuBLAS); cpu uses the native kernels when they load and pure Go otherwise.
func useDevice(name string) error {
	switch name {
	case "":
		return nil
	case "cpu":
		if err := toy.UseBackend("native"); err != nil {
			return toy.UseBackend("go")
		}
		return nil
	case "cuda":
		if err := toy.UseBackend("cuda"); err != nil {
			return failure(fmt.Errorf("--device cuda: %w", err))
		}
		return nil
	}
	return fmt.Errorf("%w: --device %q: want cpu or cuda", errUsage, name)
}
