// install-kernel: register toysh as a Jupyter kernel for the current user.

package shell

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toyml/toy/kernelspec"
)

// installKernel registers the kernel to run this program as the shell was
// run: `toysh kernel CONN`, or `toy toysh kernel CONN` where toysh is a
// subcommand.
func (sh *shell) installKernel() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := kernelspec.Install(exe)
	if err != nil {
		return err
	}
	run := append([]string{exe}, sh.cmd[1:]...)
	if len(sh.cmd) > 1 {
		if err := insertArgs(filepath.Join(dir, "kernel.json"), sh.cmd[1:]); err != nil {
			return err
		}
	}
	fmt.Fprintf(sh.stdout, "installed the toy kernel in %s (runs %s)\n", dir, strings.Join(run, " "))
	return nil
}

// insertArgs puts words after the program in the argv of the kernelspec at
// path (kernelspec writes the program alone: `PROGRAM kernel CONN`).
func insertArgs(path string, words []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	argv, _ := spec["argv"].([]any)
	if len(argv) == 0 {
		return fmt.Errorf("%s: no argv", path)
	}
	for i, w := range words {
		argv = slices.Insert(argv, 1+i, any(w))
	}
	spec["argv"] = argv
	b, err = json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
