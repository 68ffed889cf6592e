// MODEL arguments: a reference resolved through toy/hub, or the name of the
// model toy ships with (defaultmodel.Name, "toy-go").

package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/hub"
)

// isBuiltin reports whether ref names the model toy ships with: its name,
// when no file of that name is in the way (an existing path wins, as it does
// for every reference).
func isBuiltin(ref string) bool {
	if ref != defaultmodel.Name {
		return false
	}
	_, err := os.Stat(ref)
	return err != nil
}

// resolveModel turns a MODEL reference into the path of a GGUF file: the
// built-in model's cached copy (see builtinFile) for its name, else what
// hub.Resolve finds. Commands that load a model use loadModel, which needs
// no file for the built-in one; those that hand a path on (recipes,
// quantize, embed) use this.
func resolveModel(ref string) (string, error) {
	if isBuiltin(ref) {
		return builtinFile()
	}
	return hub.Resolve(ref)
}

// loadModel resolves the one MODEL argument (a path, a name found by toy
// list, an Ollama, Hugging Face or LM Studio reference, or the built-in
// model's name) and loads it; with no argument it loads the built-in model.
func loadModel(pos []string) (*toy.Model, error) {
	if len(pos) == 0 {
		return toy.LoadDefault()
	}
	ref, err := oneModel(pos)
	if err != nil {
		return nil, err
	}
	if isBuiltin(ref) {
		return toy.LoadDefault() // Path is defaultmodel.Name: JSON reports "model":"toy-go"
	}
	path, err := hub.Resolve(ref)
	if err != nil {
		return nil, err
	}
	return toy.Load(path)
}

// openModel applies --threads and --device, loads the MODEL argument as
// loadModel does, and applies the --lora adapter if one is given.
func openModel(pos []string, threads int, device, lora string) (*toy.Model, error) {
	if err := setThreads(threads); err != nil {
		return nil, err
	}
	if err := useDevice(device); err != nil {
		return nil, err
	}
	m, err := loadModel(pos)
	if err != nil {
		return nil, err
	}
	if lora != "" {
		if err := m.LoadAdapter(lora, 1); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// describeModel returns the card of a MODEL reference and the path it
// resolved to (the built-in model's name for the built-in model).
func describeModel(ref string) (*card.Card, string, error) {
	if isBuiltin(ref) {
		h, err := gguf.Parse(defaultmodel.Bytes())
		if err != nil {
			return nil, "", fmt.Errorf("describe %s: %w", ref, err)
		}
		c, err := card.FromHeader(h)
		return c, defaultmodel.Name, err
	}
	path, err := hub.Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	c, err := card.Describe(path)
	return c, path, err
}

// builtinModel is the built-in model as a row of toy list.
func builtinModel() hub.Model {
	m := hub.Model{Name: defaultmodel.Name, Source: "builtin", Path: defaultmodel.Name, Size: int64(len(defaultmodel.Bytes()))}
	h, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		m.Err = err.Error()
		return m
	}
	m.Arch, _ = h.Architecture()
	m.Params, m.Quant = h.ParamCount(), h.Quant()
	return m
}

// builtinFile returns the path of a file holding the built-in model's bytes,
// for what takes a file (the recipes, which record a LoRA run's base by its
// path, quantize, embed): toy/toy-go-HASH.gguf in the user's cache directory
// (else the temporary directory), written once, atomically, and rewritten if
// its bytes differ. The name carries the bytes' hash, so a newer toy's
// model never replaces the one an older run was based on.
func builtinFile() (string, error) {
	b := defaultmodel.Bytes()
	sum := sha256.Sum256(b)
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "toy")
	path := filepath.Join(dir, defaultmodel.Name+"-"+hex.EncodeToString(sum[:6])+".gguf")
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, b) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("the built-in model %s needs a file here: %w", defaultmodel.Name, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("the built-in model %s needs a file here: %w", defaultmodel.Name, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", fmt.Errorf("write the built-in model %s to %s: %w", defaultmodel.Name, path, err)
	}
	return path, nil
}
