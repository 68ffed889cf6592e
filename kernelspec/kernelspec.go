// Package kernelspec holds toy's Jupyter kernelspec (kernel.json) and writes
// it, pointed at a toysh binary, into a Jupyter kernels directory.
package kernelspec

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

//go:embed kernel.json
var kernelJSON []byte

// Spec is the committed kernel.json.
func Spec() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(kernelJSON, &m); err != nil {
		panic(fmt.Sprintf("kernelspec: kernel.json: %v", err))
	}
	return m
}

// Write writes kernel.json into dir, with argv[0] set to the toysh binary.
func Write(dir, toysh string) error {
	m := Spec()
	argv := m["argv"].([]any)
	argv[0] = toysh
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("kernelspec: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "kernel.json"), append(b, '\n'), 0o644)
}

// DataDir is where Jupyter looks for the user's kernels: $JUPYTER_DATA_DIR,
// else $XDG_DATA_HOME/jupyter or ~/.local/share/jupyter (~/Library/Jupyter on
// macOS).
func DataDir() (string, error) {
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Jupyter"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "jupyter"), nil
	}
	return filepath.Join(home, ".local", "share", "jupyter"), nil
}

// Install registers the toy kernel (running the toysh binary at toysh) for
// the current user and returns the kernelspec directory.
func Install(toysh string) (string, error) {
	data, err := DataDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(data, "kernels", "toy")
	return dir, Write(dir, toysh)
}
