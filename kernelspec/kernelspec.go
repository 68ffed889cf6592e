// Package kernelspec holds toy's Jupyter kernelspec (kernel.json and the
// logos Jupyter shows for the kernel) and writes it, pointed at a toysh
// binary, into a Jupyter kernels directory.
package kernelspec

//go:generate go run ./internal/genlogo -out .

import (
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

//go:embed kernel.json
var kernelJSON []byte

// Logos are the kernel's logo files by name (logo-32x32.png,
// logo-64x64.png), drawn by internal/genlogo.
//
//go:embed logo-32x32.png logo-64x64.png
var logos embed.FS

// Spec is the committed kernel.json.
func Spec() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(kernelJSON, &m); err != nil {
		panic(fmt.Sprintf("kernelspec: kernel.json: %v", err))
	}
	return m
}

// Write writes kernel.json, with argv[0] set to the toysh binary, and the
// logos into dir.
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
	if err := os.WriteFile(filepath.Join(dir, "kernel.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("kernelspec: %w", err)
	}
	for _, name := range []string{"logo-32x32.png", "logo-64x64.png"} {
		png, err := logos.ReadFile(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			return fmt.Errorf("kernelspec: %w", err)
		}
	}
	return nil
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
