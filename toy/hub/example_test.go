package hub_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toyml/toy/toy/hub"
)

func ExampleLocations_Resolve() {
	dir, _ := os.MkdirTemp("", "models")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "tiny.gguf"), []byte("GGUF"), 0o644)

	l := hub.Locations{Dirs: []string{dir}} // hub.Resolve uses hub.DefaultLocations()
	path, _ := l.Resolve("tiny.gguf")
	fmt.Println(filepath.Base(path))
	_, err := l.Resolve("llama3.2")
	fmt.Println(errors.Is(err, hub.ErrNotFound))
	// Output:
	// tiny.gguf
	// true
}
