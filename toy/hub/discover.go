// Discovering GGUF models on this machine.

package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/gguf"
)

// Sources of models, as Model.Source names them.
const (
	SourceDir         = "dir" // $TOY_MODEL_DIR, ./models, ./data, ~/models
	SourceHuggingFace = "huggingface"
	SourceOllama      = "ollama"
	SourceLMStudio    = "lmstudio"
)

// Model is one model file found on this machine.
type Model struct {
	Name   string `json:"name"`   // how to refer to it
	Source string `json:"source"` // dir, huggingface, ollama, lmstudio
	Path   string `json:"path"`
	Arch   string `json:"arch"`       // after Inspect
	Params int64  `json:"params"`     // after Inspect
	Quant  string `json:"quant"`      // after Inspect
	Size   int64  `json:"size_bytes"` // bytes on disk
	Err    string `json:"error,omitempty"`

	aliases []string // other names Resolve accepts (Ollama's untagged name)
}

// Locations are the places Discover looks.
type Locations struct {
	Dirs     []string // plain directories searched for *.gguf files
	HFCache  string   // Hugging Face hub cache
	Ollama   string   // Ollama models directory (manifests/, blobs/)
	LMStudio []string // LM Studio model directories (publisher/model/file.gguf)
}

// DefaultLocations reads the environment: TOY_MODEL_DIR, HF_HUB_CACHE,
// HF_HOME, OLLAMA_MODELS and HOME.
func DefaultLocations() Locations {
	home, _ := os.UserHomeDir()
	var l Locations
	for _, d := range filepath.SplitList(os.Getenv("TOY_MODEL_DIR")) {
		if d != "" {
			l.Dirs = append(l.Dirs, d)
		}
	}
	l.Dirs = append(l.Dirs, "models", "data")
	if home != "" {
		l.Dirs = append(l.Dirs, filepath.Join(home, "models"))
		l.LMStudio = []string{filepath.Join(home, ".lmstudio", "models"), filepath.Join(home, ".cache", "lm-studio", "models")}
	}
	l.HFCache = HFCache()
	l.Ollama = os.Getenv("OLLAMA_MODELS")
	if l.Ollama == "" && home != "" {
		l.Ollama = filepath.Join(home, ".ollama", "models")
	}
	return l
}

// HFCache returns the Hugging Face hub cache directory: $HF_HUB_CACHE, else
// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
func HFCache() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

// Discover finds models in the default locations, without reading their
// headers (see Inspect). Rows are sorted by source order, then name.
func Discover() []Model { return DefaultLocations().Discover() }

// List is Discover followed by Inspect of every row.
func List() []Model {
	ms := Discover()
	for i := range ms {
		ms[i].Inspect()
	}
	return ms
}

// Discover finds models in l.
func (l Locations) Discover() []Model {
	var out []Model
	seen := map[string]bool{}
	add := func(ms []Model) {
		slices.SortFunc(ms, func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
		for _, m := range ms {
			key := m.Name + "\x00" + m.Path
			if abs, err := filepath.Abs(m.Path); err == nil {
				key = m.Name + "\x00" + abs
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, m)
			}
		}
	}
	for _, d := range l.Dirs {
		add(walkGGUF(d, SourceDir, 4))
	}
	add(discoverHF(l.HFCache))
	add(discoverOllama(l.Ollama))
	for _, d := range l.LMStudio {
		add(walkGGUF(d, SourceLMStudio, 3))
	}
	return out
}

// Inspect reads the model's header and fills Arch, Params and Quant, or Err.
func (m *Model) Inspect() {
	if m.Err != "" {
		return
	}
	h, err := gguf.Open(m.Path)
	if err != nil {
		m.Err = err.Error()
		return
	}
	defer h.Close()
	m.Arch, _ = h.Architecture()
	m.Params = h.ParamCount()
	m.Quant = h.Quant()
}

// stat fills the size of a model file, or its error (a broken link, a
// missing blob).
func (m *Model) stat() {
	st, err := os.Stat(m.Path)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(m.Path); lerr == nil {
			target, _ := os.Readlink(m.Path)
			m.Err = fmt.Sprintf("broken link to %s", target)
		} else {
			m.Err = "file is missing"
		}
	case err != nil:
		m.Err = err.Error()
	case st.IsDir():
		m.Err = "is a directory"
	default:
		m.Size = st.Size()
	}
}

// walkGGUF finds *.gguf files under root, at most depth directories down;
// names are paths relative to root (for LM Studio, publisher/model/file.gguf).
func walkGGUF(root, source string, depth int) []Model {
	var out []Model
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable directories are skipped
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || strings.Count(rel, string(filepath.Separator)) >= depth) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(filepath.Ext(p), ".gguf") {
			return nil
		}
		m := Model{Name: filepath.ToSlash(rel), Source: source, Path: p}
		m.stat()
		out = append(out, m)
		return nil
	})
	return out
}

// discoverHF lists the GGUF files of every repo in a Hugging Face cache:
// models--OWNER--REPO/snapshots/REV/FILE, the revision refs/main names first.
func discoverHF(cache string) []Model {
	entries, _ := os.ReadDir(cache)
	var out []Model
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), "models--")
		if !ok || !e.IsDir() {
			continue
		}
		owner, repo, ok := strings.Cut(name, "--")
		if !ok {
			continue
		}
		dir := filepath.Join(cache, e.Name())
		revs := []string{}
		if b, err := os.ReadFile(filepath.Join(dir, "refs", "main")); err == nil {
			revs = append(revs, strings.TrimSpace(string(b)))
		}
		snaps, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
		for _, s := range snaps {
			if !slices.Contains(revs, s.Name()) {
				revs = append(revs, s.Name())
			}
		}
		seen := map[string]bool{}
		for _, rev := range revs {
			for _, m := range walkGGUF(filepath.Join(dir, "snapshots", rev), SourceHuggingFace, 4) {
				if seen[m.Name] {
					continue
				}
				seen[m.Name] = true
				m.Name = owner + "/" + repo + "/" + m.Name
				out = append(out, m)
			}
		}
	}
	return out
}

// ollamaManifest is the part of an Ollama manifest that names the weights.
type ollamaManifest struct {
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int64  `json:"size"`
	} `json:"layers"`
}

// discoverOllama maps manifests/REGISTRY/NAMESPACE/MODEL/TAG to the model
// layer's blob, blobs/sha256-HEX, and checks that the blob is GGUF.
func discoverOllama(dir string) []Model {
	if dir == "" {
		return nil
	}
	root := filepath.Join(dir, "manifests")
	var out []Model
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 4 {
			return nil
		}
		reg, ns, model, tag := parts[0], parts[1], parts[2], parts[3]
		m := Model{Source: SourceOllama, Name: ollamaName(reg, ns, model, tag)}
		full := reg + "/" + ns + "/" + model + ":" + tag
		if m.Name != full {
			m.aliases = append(m.aliases, full)
		}
		if tag == "latest" {
			m.aliases = append(m.aliases, strings.TrimSuffix(m.Name, ":latest"))
		}
		b, err := os.ReadFile(p)
		var man ollamaManifest
		if err == nil {
			err = json.Unmarshal(b, &man)
		}
		if err != nil {
			m.Path, m.Err = p, fmt.Sprintf("unreadable manifest: %v", err)
			out = append(out, m)
			return nil
		}
		for _, l := range man.Layers {
			if l.MediaType != "application/vnd.ollama.image.model" {
				continue
			}
			m.Path = filepath.Join(dir, "blobs", strings.Replace(l.Digest, ":", "-", 1))
			m.stat()
			if m.Err == "" && !isGGUF(m.Path) {
				m.Err = "blob is not a GGUF file"
			} else if m.Err == "file is missing" {
				m.Err = "manifest points at a missing blob " + filepath.Base(m.Path)
			}
			out = append(out, m)
			return nil
		}
		m.Path, m.Err = p, "manifest has no model layer"
		out = append(out, m)
		return nil
	})
	return out
}

// ollamaName is the name Ollama shows: "llama3.2:latest" for the library,
// "user/model:tag" for other namespaces, "hf.co/owner/repo:tag" elsewhere.
func ollamaName(reg, ns, model, tag string) string {
	switch {
	case reg == "registry.ollama.ai" && ns == "library":
		return model + ":" + tag
	case reg == "registry.ollama.ai":
		return ns + "/" + model + ":" + tag
	}
	return reg + "/" + ns + "/" + model + ":" + tag
}

// isGGUF reports whether the file starts with the GGUF magic.
func isGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == "GGUF"
}
