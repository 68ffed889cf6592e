package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/tensor"
)

// tinyGGUF returns the bytes of a small llama model.
func tinyGGUF(t *testing.T) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.gguf")
	s := testmodel.Spec{Name: "m", Arch: "llama", DType: tensor.Q8_0, Vocab: "none", VocabSize: 64, Embed: 32,
		Layers: 1, FFN: 64, Heads: 2, KVHeads: 1, Context: 32, Tied: true, Seed: 1}
	if _, err := testmodel.Write(s, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// fakeHome builds a home with models in every place discovery looks, points
// the environment at it and changes into a working directory inside it.
func fakeHome(t *testing.T) string {
	home := t.TempDir()
	model := tinyGGUF(t)
	for _, k := range []string{"TOY_MODEL_DIR", "HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "OLLAMA_MODELS"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("TOY_MODEL_DIR", filepath.Join(home, "toydir"))
	put(t, filepath.Join(home, "toydir", "mine.gguf"), model)
	put(t, filepath.Join(home, "toydir", "half.gguf"), model[:100]) // half-written
	put(t, filepath.Join(home, "toydir", "notes.txt"), []byte("not a model"))
	work := filepath.Join(home, "work")
	put(t, filepath.Join(work, "models", "local.gguf"), model)
	put(t, filepath.Join(home, "models", "shared.gguf"), model)
	t.Chdir(work)

	// Hugging Face cache: blobs, a snapshot of symlinks, refs/main.
	hf := filepath.Join(home, ".cache", "huggingface", "hub", "models--acme--tiny-GGUF")
	put(t, filepath.Join(hf, "blobs", "abc123"), model)
	put(t, filepath.Join(hf, "refs", "main"), []byte("c0ffee\n"))
	symlink(t, "../../blobs/abc123", filepath.Join(hf, "snapshots", "c0ffee", "tiny-Q8_0.gguf"))
	symlink(t, "../../blobs/gone", filepath.Join(hf, "snapshots", "c0ffee", "tiny-F16.gguf")) // broken
	put(t, filepath.Join(hf, "snapshots", "c0ffee", "README.md"), []byte("# tiny"))

	// Ollama: manifests name blobs without a .gguf suffix.
	ol := filepath.Join(home, ".ollama", "models")
	digest := "sha256-" + strings.Repeat("a", 64)
	put(t, filepath.Join(ol, "blobs", digest), model)
	manifest := func(layers ...string) []byte {
		var ls []map[string]any
		for _, d := range layers {
			ls = append(ls, map[string]any{"mediaType": "application/vnd.ollama.image.model", "digest": d, "size": len(model)})
		}
		b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "layers": ls})
		return b
	}
	put(t, filepath.Join(ol, "manifests", "registry.ollama.ai", "library", "tinyllama", "latest"), manifest("sha256:"+strings.Repeat("a", 64)))
	put(t, filepath.Join(ol, "manifests", "registry.ollama.ai", "library", "qwen2.5", "0.5b"), manifest("sha256:"+strings.Repeat("a", 64)))
	put(t, filepath.Join(ol, "manifests", "hf.co", "acme", "tiny-GGUF", "Q8_0"), manifest("sha256:"+strings.Repeat("a", 64)))
	put(t, filepath.Join(ol, "manifests", "registry.ollama.ai", "library", "ghost", "latest"), manifest("sha256:"+strings.Repeat("b", 64)))

	// LM Studio: publisher/model/file.gguf.
	put(t, filepath.Join(home, ".lmstudio", "models", "lmstudio-community", "Tiny-GGUF", "Tiny-Q8_0.gguf"), model)
	return home
}

func TestDiscover(t *testing.T) {
	fakeHome(t)
	ms := List()
	type row struct{ name, source, err string }
	var got []row
	for _, m := range ms {
		if m.Err == "" && (m.Arch != "llama" || m.Params <= 0 || m.Quant != "Q8_0" || m.Size <= 0) {
			t.Errorf("%s: not inspected: %+v", m.Name, m)
		}
		e := m.Err
		if i := strings.Index(e, ":"); i >= 0 {
			e = e[:i]
		}
		got = append(got, row{m.Name, m.Source, e})
	}
	want := []row{
		{"half.gguf", "dir", "gguf"},
		{"mine.gguf", "dir", ""},
		{"local.gguf", "dir", ""},
		{"shared.gguf", "dir", ""},
		{"acme/tiny-GGUF/tiny-F16.gguf", "huggingface", "broken link to ../../blobs/gone"},
		{"acme/tiny-GGUF/tiny-Q8_0.gguf", "huggingface", ""},
		{"ghost:latest", "ollama", "manifest points at a missing blob sha256-" + strings.Repeat("b", 64)},
		{"hf.co/acme/tiny-GGUF:Q8_0", "ollama", ""},
		{"qwen2.5:0.5b", "ollama", ""},
		{"tinyllama:latest", "ollama", ""},
		{"lmstudio-community/Tiny-GGUF/Tiny-Q8_0.gguf", "lmstudio", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%v\nwant\n%v", got, want)
	}
}

func TestResolve(t *testing.T) {
	home := fakeHome(t)
	hf := filepath.Join(home, ".cache", "huggingface", "hub", "models--acme--tiny-GGUF", "snapshots", "c0ffee")
	blob := filepath.Join(home, ".ollama", "models", "blobs", "sha256-"+strings.Repeat("a", 64))
	for ref, want := range map[string]string{
		"models/local.gguf":             "models/local.gguf",
		"mine.gguf":                     filepath.Join(home, "toydir", "mine.gguf"),
		"tinyllama":                     blob,
		"tinyllama:latest":              blob,
		"qwen2.5:0.5b":                  blob,
		"hf.co/acme/tiny-GGUF:Q8_0":     blob,
		"acme/tiny-GGUF/tiny-Q8_0.gguf": filepath.Join(hf, "tiny-Q8_0.gguf"),
		"lmstudio-community/Tiny-GGUF":  filepath.Join(home, ".lmstudio", "models", "lmstudio-community", "Tiny-GGUF", "Tiny-Q8_0.gguf"),
		filepath.Join(home, "models"):   filepath.Join(home, "models", "shared.gguf"),
		"half.gguf":                     filepath.Join(home, "toydir", "half.gguf"), // loading will say it is truncated
	} {
		got, err := Resolve(ref)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	for ref, want := range map[string]error{
		"acme/tiny-GGUF":   ErrAmbiguous, // the Q8_0 file and the broken F16 link
		"nothing-here":     ErrNotFound,
		"owner/missing":    ErrNotFound,
		"./nope/file.gguf": ErrNotFound,
		"":                 ErrNotFound,
		"ghost":            nil, // found, but its blob is missing: the row's error
	} {
		_, err := Resolve(ref)
		if err == nil || want != nil && !errors.Is(err, want) {
			t.Errorf("Resolve(%q): %v, want %v", ref, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Resolve(%q): error on several lines: %q", ref, err)
		}
	}
	_, err := Resolve("acme/tiny-GGUF")
	if !strings.Contains(fmt.Sprint(err), "acme/tiny-GGUF/tiny-Q8_0.gguf (huggingface)") {
		t.Errorf("ambiguity does not list candidates: %v", err)
	}
	_, err = Resolve("owner/missing")
	if !strings.Contains(fmt.Sprint(err), "toy fetch owner/missing") {
		t.Errorf("not-found hint: %v", err)
	}
}

// fakeHub serves a repo the way the Hugging Face API does: the revision
// endpoint (with blobs=true) and resolve URLs honouring Range.
type fakeHub struct {
	mu       sync.Mutex
	files    map[string][]byte
	plain    map[string][]byte // files outside LFS, announced by git blob id
	announce map[string]string // sha256 the API announces (default: the true one)
	dropAt   int64             // close the connection after this many bytes once (0: never)
	token    string            // required bearer token ("": none)
	ranges   []string
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.token != "" && r.Header.Get("Authorization") != "Bearer "+h.token {
		http.Error(w, "gated", http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/models/acme/tiny/revision/") {
		var sib []map[string]any
		for name, b := range h.files {
			sum := sha256.Sum256(b)
			s := hex.EncodeToString(sum[:])
			if a, ok := h.announce[name]; ok {
				s = a
			}
			sib = append(sib, map[string]any{"rfilename": name, "size": len(b), "lfs": map[string]any{"sha256": s, "size": len(b)}})
		}
		for name, b := range h.plain {
			id := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(b))), b...))
			s := hex.EncodeToString(id[:])
			if a, ok := h.announce[name]; ok {
				s = a
			}
			sib = append(sib, map[string]any{"rfilename": name, "size": len(b), "blobId": s})
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "acme/tiny", "sha": "deadbeef", "siblings": sib})
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/acme/tiny/resolve/deadbeef/")
	b, found := h.files[name]
	if p, isPlain := h.plain[name]; isPlain {
		b, found = p, true
	}
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	var from int64
	if rg := r.Header.Get("Range"); rg != "" {
		h.ranges = append(h.ranges, rg)
		from, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"), 10, 64)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, len(b)-1, len(b)))
		w.Header().Set("Content-Length", strconv.Itoa(len(b)-int(from)))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	}
	body := b[from:]
	if h.dropAt > 0 && h.dropAt < int64(len(body)) {
		w.Write(body[:h.dropAt])
		w.(http.Flusher).Flush()
		h.dropAt = 0
		panic(http.ErrAbortHandler) // drop the connection mid-file
	}
	w.Write(body)
}

func newHub(t *testing.T, model []byte) (*fakeHub, FetchOptions) {
	h := &fakeHub{files: map[string][]byte{"tiny-Q8_0.gguf": model, "tiny-F16.gguf": model[:64]}, announce: map[string]string{},
		plain: map[string][]byte{"README.md": []byte("# tiny\n"), "config.json": []byte("{}\n")}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, FetchOptions{Endpoint: srv.URL, Cache: filepath.Join(t.TempDir(), "hub")}
}

func TestFetch(t *testing.T) {
	model := tinyGGUF(t)
	h, opts := newHub(t, model)
	h.dropAt = int64(len(model) / 3)
	var seen int64
	opts.Progress = func(file string, total, done int64) io.Writer {
		return writerFunc(func(p []byte) (int, error) { seen += int64(len(p)); return len(p), nil })
	}
	path, err := Fetch(context.Background(), "acme/tiny", "tiny-Q8_0.gguf", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.ranges) != 1 || h.ranges[0] != fmt.Sprintf("bytes=%d-", len(model)/3) {
		t.Errorf("did not resume with a Range request: %v", h.ranges)
	}
	if seen != int64(len(model)) {
		t.Errorf("progress saw %d bytes of %d", seen, len(model))
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != string(model) {
		t.Fatalf("fetched file differs: %v", err)
	}
	repo := filepath.Join(opts.Cache, "models--acme--tiny")
	if want := filepath.Join(repo, "snapshots", "deadbeef", "tiny-Q8_0.gguf"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	if ref, _ := os.ReadFile(filepath.Join(repo, "refs", "main")); string(ref) != "deadbeef" {
		t.Errorf("refs/main = %q", ref)
	}
	if l, _ := os.Readlink(path); !strings.HasPrefix(l, "../../blobs/") {
		t.Errorf("snapshot link %q", l)
	}
	// Discovery and resolution see it, as every other tool would.
	t.Setenv("HF_HUB_CACHE", opts.Cache)
	if got, err := (Locations{HFCache: opts.Cache}).Resolve("acme/tiny/tiny-Q8_0.gguf"); err != nil || got != path {
		t.Errorf("Resolve after fetch: %q, %v", got, err)
	}
	// A second fetch finds it in the cache.
	h.files["tiny-Q8_0.gguf"] = nil
	if _, err := Fetch(context.Background(), "acme/tiny", "tiny-Q8_0.gguf", opts); err != nil {
		t.Errorf("cached fetch: %v", err)
	}
}

func TestFetchErrors(t *testing.T) {
	model := tinyGGUF(t)
	h, opts := newHub(t, model)
	h.announce["tiny-F16.gguf"] = strings.Repeat("0", 64)
	ctx := context.Background()
	_, err := Fetch(ctx, "acme/tiny", "tiny-F16.gguf", opts)
	if !errors.Is(err, ErrChecksum) {
		t.Errorf("wrong checksum: %v", err)
	}
	blobs, _ := os.ReadDir(filepath.Join(opts.Cache, "models--acme--tiny", "blobs"))
	snaps, _ := os.ReadDir(filepath.Join(opts.Cache, "models--acme--tiny", "snapshots"))
	if len(blobs) != 0 || len(snaps) != 0 {
		t.Errorf("left in the cache after a bad checksum: %v %v", blobs, snaps)
	}
	// A file outside LFS is checked by its git blob id: a good one is kept,
	// a corrupt one refused.
	if _, err := Fetch(ctx, "acme/tiny", "README.md", opts); err != nil {
		t.Errorf("a plain file with its blob id: %v", err)
	}
	h.announce["config.json"] = strings.Repeat("1", 40)
	if _, err := Fetch(ctx, "acme/tiny", "config.json", opts); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "git blob id") {
		t.Errorf("a corrupt plain file: %v", err)
	}
	if _, err := Fetch(ctx, "acme/tiny", "nope.gguf", opts); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "tiny-Q8_0.gguf") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Fetch(ctx, "acme/other", "x.gguf", opts); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing repo: %v", err)
	}
	if _, err := Fetch(ctx, "not-a-repo", "x.gguf", opts); !errors.Is(err, ErrNotFound) {
		t.Errorf("bad repo name: %v", err)
	}
	h.token = "sesame"
	if _, err := Fetch(ctx, "acme/tiny", "tiny-Q8_0.gguf", opts); !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("gated without a token: %v", err)
	}
	t.Setenv("HF_TOKEN", "sesame")
	if _, err := Fetch(ctx, "acme/tiny", "tiny-Q8_0.gguf", opts); err != nil {
		t.Errorf("gated with HF_TOKEN: %v", err)
	}
	// A connection that keeps dropping: an error saying how to resume, and
	// the partial download kept under its temporary name only.
	h2, opts2 := newHub(t, model)
	opts2.Retries = -1
	h2.dropAt = 100
	_, err = Fetch(ctx, "acme/tiny", "tiny-Q8_0.gguf", opts2)
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "again to resume") {
		t.Errorf("dropped connection: %v", err)
	}
	blobs, _ = os.ReadDir(filepath.Join(opts2.Cache, "models--acme--tiny", "blobs"))
	if len(blobs) != 1 || !strings.HasSuffix(blobs[0].Name(), ".incomplete") {
		t.Errorf("blobs after an interrupted fetch: %v", blobs)
	}
	if _, err := Fetch(ctx, "acme/tiny", "tiny-Q8_0.gguf", opts2); err != nil || len(h2.ranges) != 1 {
		t.Errorf("resume in a second run: %v, ranges %v", err, h2.ranges)
	}
}

func TestSuggest(t *testing.T) {
	fs := []RepoFile{{Path: "m-Q4_K_M.gguf"}, {Path: "m-F16.gguf"}, {Path: "m-Q8_0.gguf"}}
	if f, _ := Suggest(fs); f.Path != "m-Q8_0.gguf" {
		t.Errorf("Suggest = %s", f.Path)
	}
	if f, _ := Suggest(fs[:2]); f.Path != "m-Q4_K_M.gguf" {
		t.Errorf("Suggest without Q8_0 = %s, want the Q4_K_M file", f.Path)
	}
	if f, _ := Suggest([]RepoFile{{Path: "m-IQ2_XS.gguf"}, {Path: "m-Q4_K_S.gguf"}, {Path: "m-BF16.gguf"}}); f.Path != "m-BF16.gguf" {
		t.Errorf("Suggest = %s, want the BF16 file", f.Path)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A full disk: the write fails, the temporary file goes, the error says why.
func TestFetchDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	model := tinyGGUF(t)
	_, opts := newHub(t, model)
	sum := sha256.Sum256(model)
	blobs := filepath.Join(opts.Cache, "models--acme--tiny", "blobs")
	symlink(t, "/dev/full", filepath.Join(blobs, hex.EncodeToString(sum[:])+".incomplete"))
	_, err := Fetch(context.Background(), "acme/tiny", "tiny-Q8_0.gguf", opts)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || errors.Is(err, ErrInterrupted) {
		t.Fatalf("disk full: %v", err)
	}
	if left, _ := os.ReadDir(blobs); len(left) != 0 {
		t.Errorf("left in blobs/: %v", left)
	}
}

func TestLocationsEnv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "OLLAMA_MODELS"} {
		t.Setenv(k, "")
	}
	t.Setenv("TOY_MODEL_DIR", "/a"+string(os.PathListSeparator)+"/b")
	l := DefaultLocations()
	if want := filepath.Join(home, ".cache", "huggingface", "hub"); l.HFCache != want {
		t.Errorf("default HF cache %s, want %s", l.HFCache, want)
	}
	if want := filepath.Join(home, ".ollama", "models"); l.Ollama != want {
		t.Errorf("default Ollama dir %s", l.Ollama)
	}
	if want := []string{"/a", "/b", "models", "data", filepath.Join(home, "models")}; !slices.Equal(l.Dirs, want) {
		t.Errorf("dirs %v, want %v", l.Dirs, want)
	}
	t.Setenv("HF_HOME", "/hf")
	t.Setenv("OLLAMA_MODELS", "/ol")
	if l := DefaultLocations(); l.HFCache != "/hf/hub" || l.Ollama != "/ol" {
		t.Errorf("HF_HOME, OLLAMA_MODELS: %+v", l)
	}
	t.Setenv("HF_HUB_CACHE", "/cache")
	if HFCache() != "/cache" {
		t.Errorf("HF_HUB_CACHE ignored: %s", HFCache())
	}
}
