// The committed libraries must come from the committed sources.

package cpu

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/kernels"
)

// TestLibrariesCurrent fails when csrc/ or build.sh changed after the
// libraries were built: rebuild them with go generate ./kernels/cpu .
func TestLibrariesCurrent(t *testing.T) {
	h := sha256.New()
	for _, f := range sourceFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sourcesSHA256 {
		t.Fatalf("the C sources changed since the libraries were built (SHA-256 %s, built from %s): run go generate ./kernels/cpu", got, sourcesSHA256)
	}
	files, err := filepath.Glob("lib/*.so")
	if err != nil || len(files) != len(libSHA256) {
		t.Fatalf("lib/ holds %d libraries, zlibs.go records %d (%v)", len(files), len(libSHA256), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != libSHA256[filepath.Base(f)] {
			t.Errorf("%s has SHA-256 %s, build.sh recorded %s: run go generate ./kernels/cpu", f, got, libSHA256[filepath.Base(f)])
		}
	}
}

// TestUnwritableCache: with no usable cache directory, loading fails with a
// NativeCallError that says what to do.
func TestUnwritableCache(t *testing.T) {
	if len(Variants()) == 0 {
		t.Skip("no native kernels on this platform")
	}
	t.Setenv("XDG_CACHE_HOME", "/dev/null/toy-cache")
	libMu.Lock()
	saved, savedErrs := libs, libErrs
	libs, libErrs = map[string]*library{}, map[string]error{}
	libMu.Unlock()
	defer func() {
		libMu.Lock()
		libs, libErrs = saved, savedErrs
		libMu.Unlock()
	}()
	_, err := Load()
	var ne *kernels.NativeCallError
	if !errors.As(err, &ne) || ne.Hint == "" {
		t.Fatalf("Load with an unwritable cache: %v, want a NativeCallError with a hint", err)
	}
	t.Log(err)
}

// TestDamagedCacheFile: a damaged copy in the cache is replaced, not loaded.
func TestDamagedCacheFile(t *testing.T) {
	if len(Variants()) == 0 {
		t.Skip("no native kernels on this platform")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	v := Variants()[len(Variants())-1]
	data, _ := libFS.ReadFile("lib/" + libFile(v))
	sum := sha256.Sum256(data)
	path := filepath.Join(dir, "toy", "kernels", hex.EncodeToString(sum[:8]), libFile(v))
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, data[:len(data)/2], 0o755)
	got, err := cacheFile(libFile(v), data, sum)
	if err != nil || got != path {
		t.Fatalf("cacheFile = %q, %v", got, err)
	}
	if b, _ := os.ReadFile(path); len(b) != len(data) {
		t.Fatalf("damaged copy not replaced: %d bytes, want %d", len(b), len(data))
	}
}
