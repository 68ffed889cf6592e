package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hubServer serves acme/tiny as the Hugging Face API does; bad is a file
// whose announced checksum is wrong.
func hubServer(t *testing.T, model []byte) *httptest.Server {
	sum := sha256.Sum256(model)
	files := map[string][]byte{"tiny-Q8_0.gguf": model, "tiny-Q4_K_M.gguf": model, "bad.gguf": model}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/models/acme/tiny/revision/main":
			var sib []map[string]any
			for _, name := range []string{"tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf", "bad.gguf"} {
				s := hex.EncodeToString(sum[:])
				if name == "bad.gguf" {
					s = strings.Repeat("0", 64)
				}
				sib = append(sib, map[string]any{"rfilename": name, "size": len(model), "lfs": map[string]any{"sha256": s, "size": len(model)}})
			}
			json.NewEncoder(w).Encode(map[string]any{"sha": "1234abcd", "siblings": sib})
		case r.URL.Path == "/api/models/acme/gated/revision/main":
			http.Error(w, "gated", http.StatusUnauthorized)
		case strings.HasPrefix(r.URL.Path, "/acme/tiny/resolve/1234abcd/"):
			b, ok := files[strings.TrimPrefix(r.URL.Path, "/acme/tiny/resolve/1234abcd/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchCommand(t *testing.T) {
	home := modelHome(t)
	model, _ := os.ReadFile(tinyModel(t))
	srv := hubServer(t, model)
	t.Setenv("HF_ENDPOINT", srv.URL)

	status, out, errs := runToy("fetch", "acme/tiny", "--json")
	var listing struct {
		Format, Repo, Commit, Suggested string
		Files                           []map[string]any
	}
	if status != 0 || json.Unmarshal([]byte(out), &listing) != nil {
		t.Fatalf("fetch listing: %d %s %s", status, errs, out)
	}
	if listing.Format != "toy/fetch-v1" || listing.Suggested != "tiny-Q8_0.gguf" || len(listing.Files) != 3 {
		t.Errorf("listing %+v", listing)
	}
	status, out, _ = runToy("fetch", "acme/tiny")
	if status != 0 || !strings.Contains(out, "toy fetch acme/tiny tiny-Q8_0.gguf") {
		t.Errorf("fetch listing text: %d\n%s", status, out)
	}

	status, out, errs = runToy("fetch", "acme/tiny", "tiny-Q8_0.gguf", "--json")
	var got struct{ Format, Path string }
	if status != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("fetch: %d %s %s", status, errs, out)
	}
	want := filepath.Join(home, ".cache", "huggingface", "hub", "models--acme--tiny", "snapshots", "1234abcd", "tiny-Q8_0.gguf")
	if got.Path != want {
		t.Errorf("fetched to %s, want %s", got.Path, want)
	}
	// The fetched model is a reference like any other.
	if status, _, errs := runToy("describe", "acme/tiny"); status != 0 {
		t.Errorf("describe acme/tiny after fetch: %s", errs)
	}
	if status, out, _ := runToy("fetch", "acme/tiny", "tiny-Q8_0.gguf", "--quiet"); status != 0 || strings.TrimSpace(out) != want {
		t.Errorf("second fetch: %d %q", status, out)
	}

	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"fetch", "acme/tiny", "bad.gguf", "--json"}, 1, "checksum mismatch"},
		{[]string{"fetch", "acme/tiny", "nope.gguf"}, 2, "has no file"},
		{[]string{"fetch", "acme/missing"}, 2, "not found"},
		{[]string{"fetch", "acme/gated", "x.gguf"}, 2, "HF_TOKEN"},
		{[]string{"fetch"}, 2, "OWNER/REPO"},
		{[]string{"fetch", "no-slash"}, 2, "not a Hugging Face repo"},
	} {
		status, _, errs := runToy(c.args...)
		if status != c.status || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: status %d, stderr %q; want %d and %q on one line", c.args, status, errs, c.status, c.want)
		}
	}
	blobs, _ := os.ReadDir(filepath.Join(home, ".cache", "huggingface", "hub", "models--acme--tiny", "blobs"))
	if len(blobs) != 1 {
		t.Errorf("blobs after a bad checksum: %v", blobs)
	}
}
