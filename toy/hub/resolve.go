// Resolving a model reference to a file.

package hub

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Sentinel errors.
var (
	ErrNotFound     = errors.New("model not found")
	ErrAmbiguous    = errors.New("ambiguous model reference")
	ErrUnauthorized = errors.New("not authorized")
	ErrChecksum     = errors.New("checksum mismatch")
	ErrInterrupted  = errors.New("download interrupted")
)

// Resolve turns a model reference (see the package doc) into the path of a
// GGUF file, looking in the default locations.
func Resolve(ref string) (string, error) { return DefaultLocations().Resolve(ref) }

// Resolve turns a model reference into the path of a GGUF file in l.
//
// An existing file is returned as it is; a directory holding exactly one
// .gguf file resolves to it. Otherwise the reference is matched against
// discovered models: their names, Ollama names without ":latest", repo or
// publisher/model prefixes (owner/repo matches owner/repo/file.gguf), and file
// names. No match wraps ErrNotFound; several wrap ErrAmbiguous and list
// them as "name (source)", on one line.
func (l Locations) Resolve(ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("%w: empty model reference", ErrNotFound)
	}
	if st, err := os.Stat(ref); err == nil {
		if !st.IsDir() {
			return ref, nil
		}
		ms := walkGGUF(ref, SourceDir, 0)
		switch len(ms) {
		case 1:
			return ms[0].Path, nil
		case 0:
			return "", fmt.Errorf("%w: directory %s holds no .gguf file", ErrNotFound, ref)
		}
		return "", ambiguous(ref, ms)
	}
	var hits []Model
	paths := map[string]bool{} // one file found twice is one model
	for _, m := range l.Discover() {
		abs, _ := filepath.Abs(m.Path)
		if matches(ref, m) && !paths[abs] {
			paths[abs] = true
			hits = append(hits, m)
		}
	}
	// An exact name beats a prefix or a file-name match.
	for _, m := range hits {
		if m.Name == ref {
			hits = []Model{m}
			break
		}
	}
	switch len(hits) {
	case 1:
		if hits[0].Err != "" {
			return "", fmt.Errorf("%s (%s at %s): %s", hits[0].Name, hits[0].Source, hits[0].Path, hits[0].Err)
		}
		return hits[0].Path, nil
	case 0:
		hint := "run \"toy list\" to see the models found on this machine"
		if strings.Count(ref, "/") >= 1 && !strings.HasPrefix(ref, ".") && !filepath.IsAbs(ref) {
			hint += fmt.Sprintf(", or \"toy fetch %s\" to download it from Hugging Face", ref)
		}
		return "", fmt.Errorf("%w: %q is not a file and no model found has that name; %s", ErrNotFound, ref, hint)
	}
	return "", ambiguous(ref, hits)
}

func ambiguous(ref string, ms []Model) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %q matches %d models, name one of:", ErrAmbiguous, ref, len(ms))
	for i, m := range ms {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s (%s)", m.Name, m.Source)
	}
	return &ambiguousError{msg: b.String()}
}

type ambiguousError struct{ msg string }

func (e *ambiguousError) Error() string        { return e.msg }
func (e *ambiguousError) Is(target error) bool { return target == ErrAmbiguous }

// matches reports whether ref names m.
func matches(ref string, m Model) bool {
	if m.Name == ref {
		return true
	}
	for _, a := range m.aliases {
		if strings.EqualFold(a, ref) {
			return true
		}
	}
	switch m.Source {
	case SourceOllama:
		if strings.EqualFold(m.Name, ref) || !strings.Contains(ref, ":") && strings.EqualFold(m.Name, ref+":latest") {
			return true
		}
	case SourceHuggingFace, SourceLMStudio:
		if strings.HasPrefix(m.Name, strings.TrimSuffix(ref, "/")+"/") {
			return true
		}
	}
	return !strings.Contains(ref, "/") && (path.Base(m.Name) == ref || filepath.Base(m.Path) == ref)
}
