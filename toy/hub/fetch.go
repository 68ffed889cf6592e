// Downloading from the Hugging Face hub into its cache layout.

package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FetchOptions configure Fetch and RepoFiles; the zero value reads the
// environment.
type FetchOptions struct {
	Endpoint string       // hub URL; default $HF_ENDPOINT, else https://huggingface.co
	Token    string       // bearer token; default $HF_TOKEN
	Cache    string       // cache directory; default HFCache()
	Revision string       // branch, tag or commit; default "main"
	Client   *http.Client // default http.DefaultClient
	Retries  int          // resumed attempts after a dropped connection; default 3
	// Progress, when set, is called once the size is known; the returned
	// writer (nil: none) receives every byte downloaded, as a progress bar does.
	Progress func(file string, total, done int64) io.Writer
}

func (o FetchOptions) withDefaults() FetchOptions {
	if o.Endpoint == "" {
		o.Endpoint = os.Getenv("HF_ENDPOINT")
	}
	if o.Endpoint == "" {
		o.Endpoint = "https://huggingface.co"
	}
	o.Endpoint = strings.TrimSuffix(o.Endpoint, "/")
	if o.Token == "" {
		o.Token = os.Getenv("HF_TOKEN")
	}
	if o.Cache == "" {
		o.Cache = HFCache()
	}
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Retries == 0 {
		o.Retries = 3
	}
	return o
}

// RepoFile is one file of a hub repo.
type RepoFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size_bytes"`
	SHA256 string `json:"sha256,omitempty"` // for LFS files
	BlobID string `json:"-"`                // git blob id, for the others
}

// Repo is a hub repo at one commit.
type Repo struct {
	ID     string     `json:"repo"`
	Commit string     `json:"commit"`
	Files  []RepoFile `json:"files"`
}

// GGUF returns the repo's .gguf files.
func (r *Repo) GGUF() []RepoFile {
	var out []RepoFile
	for _, f := range r.Files {
		if strings.EqualFold(filepath.Ext(f.Path), ".gguf") {
			out = append(out, f)
		}
	}
	return out
}

// Suggest picks the file to fetch from a repo's GGUF files: one toy computes
// with directly (Q8_0, then Q4_K_M, Q5_K_M, F16, BF16, F32), else the first.
func Suggest(files []RepoFile) (RepoFile, bool) {
	for _, q := range []string{"q8_0", "q4_k_m", "q5_k_m", "f16", "bf16", "f32"} {
		for _, f := range files {
			if strings.Contains(strings.ToLower(filepath.Base(f.Path)), q) {
				return f, true
			}
		}
	}
	if len(files) == 0 {
		return RepoFile{}, false
	}
	return files[0], true
}

// RepoFiles asks the hub for a repo's files at a revision.
func RepoFiles(ctx context.Context, repo string, opts FetchOptions) (*Repo, error) {
	o := opts.withDefaults()
	if strings.Count(repo, "/") != 1 || strings.HasPrefix(repo, "/") || strings.HasSuffix(repo, "/") {
		return nil, fmt.Errorf("%w: %q is not a Hugging Face repo (OWNER/REPO)", ErrNotFound, repo)
	}
	u := fmt.Sprintf("%s/api/models/%s/revision/%s?blobs=true", o.Endpoint, repo, url.PathEscape(o.Revision))
	resp, err := o.get(ctx, u, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", repo, err)
	}
	defer resp.Body.Close()
	var info struct {
		SHA      string `json:"sha"`
		Siblings []struct {
			Name   string `json:"rfilename"`
			Size   int64  `json:"size"`
			BlobID string `json:"blobId"`
			LFS    *struct {
				SHA256 string `json:"sha256"`
				Size   int64  `json:"size"`
			} `json:"lfs"`
		} `json:"siblings"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&info); err != nil {
		return nil, fmt.Errorf("%s: reading the hub's answer: %w", repo, err)
	}
	r := &Repo{ID: repo, Commit: info.SHA}
	for _, s := range info.Siblings {
		f := RepoFile{Path: s.Name, Size: s.Size, BlobID: s.BlobID}
		if s.LFS != nil {
			f.SHA256, f.Size = s.LFS.SHA256, s.LFS.Size
		}
		r.Files = append(r.Files, f)
	}
	if r.Commit == "" {
		r.Commit = o.Revision
	}
	return r, nil
}

// Fetch downloads one file of a hub repo into the cache, laid out as the
// huggingface_hub library does (blobs/, snapshots/COMMIT/FILE as a relative
// symlink, refs/REVISION), and returns the snapshot path. A file already in
// the cache is not downloaded again; an interrupted download resumes with an
// HTTP Range request; an LFS file is checked against its SHA-256 before it is
// renamed into place.
func Fetch(ctx context.Context, repo, file string, opts FetchOptions) (string, error) {
	o := opts.withDefaults()
	r, err := RepoFiles(ctx, repo, o)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(r.Files, func(f RepoFile) bool { return f.Path == file })
	if i < 0 {
		var names []string
		for _, f := range r.GGUF() {
			names = append(names, f.Path)
		}
		return "", fmt.Errorf("%w: %s has no file %q (GGUF files: %s)", ErrNotFound, repo, file, strings.Join(names, ", "))
	}
	rf := r.Files[i]
	repoDir := filepath.Join(o.Cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	snap := filepath.Join(repoDir, "snapshots", r.Commit, filepath.FromSlash(file))
	blobID := rf.SHA256
	if blobID == "" {
		blobID = rf.BlobID
	}
	if blobID == "" || strings.ContainsAny(blobID, `/\.`) {
		return "", fmt.Errorf("%s/%s: the hub announced no checksum or blob id", repo, file)
	}
	blob := filepath.Join(repoDir, "blobs", blobID)
	if st, err := os.Stat(blob); err != nil || st.Size() != rf.Size {
		if err := o.download(ctx, repo, r.Commit, rf, blob); err != nil {
			return "", err
		}
	}
	if err := link(blob, snap); err != nil {
		return "", fmt.Errorf("%s/%s: %w", repo, file, err)
	}
	if o.Revision != r.Commit {
		if err := writeAtomic(filepath.Join(repoDir, "refs", o.Revision), []byte(r.Commit)); err != nil {
			return "", fmt.Errorf("%s: %w", repo, err)
		}
	}
	return snap, nil
}

// download writes the file to blob+".incomplete", resuming what an earlier
// attempt left there, checks it and renames it to blob.
func (o FetchOptions) download(ctx context.Context, repo, commit string, rf RepoFile, blob string) error {
	tmp := blob + ".incomplete"
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return err
	}
	u := fmt.Sprintf("%s/%s/resolve/%s/%s", o.Endpoint, repo, commit, rf.Path)
	var progress io.Writer
	for attempt := 0; ; attempt++ {
		done, err := o.downloadOnce(ctx, u, rf, tmp, &progress)
		if err == nil {
			break
		}
		var nerr *netError
		if !errors.As(err, &nerr) || attempt >= o.Retries || ctx.Err() != nil {
			if errors.As(err, &nerr) {
				return fmt.Errorf("%s/%s: %w at %d of %d bytes (%v); run the same command again to resume", repo, rf.Path, ErrInterrupted, done, rf.Size, nerr.err)
			}
			return fmt.Errorf("%s/%s: %w", repo, rf.Path, err)
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	// An LFS file is checked by its SHA-256, any other by its git blob id:
	// SHA-1 of "blob SIZE\x00" and the bytes.
	kind, want, sum := "sha256", rf.SHA256, fileSHA256
	if want == "" {
		kind, want, sum = "git blob id", rf.BlobID, gitBlobID
	}
	if want != "" {
		got, err := sum(tmp)
		if err != nil {
			return err
		}
		if got != want {
			os.Remove(tmp)
			return fmt.Errorf("%s/%s: %w: got %s %s, the hub announced %s; the download was discarded", repo, rf.Path, ErrChecksum, kind, got, want)
		}
	}
	return os.Rename(tmp, blob)
}

// netError marks failures worth a resumed retry: the connection, not the file.
type netError struct{ err error }

func (e *netError) Error() string { return e.err.Error() }
func (e *netError) Unwrap() error { return e.err }

// downloadOnce appends to tmp from where it ends and returns its size.
func (o FetchOptions) downloadOnce(ctx context.Context, u string, rf RepoFile, tmp string, progress *io.Writer) (int64, error) {
	var have int64
	if st, err := os.Stat(tmp); err == nil {
		have = st.Size()
	}
	if rf.Size > 0 && have > rf.Size {
		os.Remove(tmp)
		have = 0
	}
	if rf.Size > 0 && have == rf.Size {
		return have, nil
	}
	resp, err := o.get(ctx, u, have)
	if err != nil {
		return have, err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if resp.StatusCode != http.StatusPartialContent { // the server ignored the range: start over
		flags |= os.O_TRUNC
		have = 0
	}
	f, err := os.OpenFile(tmp, flags, 0o644)
	if err != nil {
		return have, err
	}
	if *progress == nil && o.Progress != nil {
		*progress = o.Progress(rf.Path, rf.Size, have)
	}
	var w io.Writer = f
	if *progress != nil {
		w = io.MultiWriter(f, *progress)
	}
	n, err := io.Copy(w, &readErrMarker{resp.Body})
	have += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var rerr *readError
	switch {
	case errors.As(err, &rerr):
		return have, &netError{rerr.err}
	case err != nil: // writing failed (a full disk): drop the partial file
		os.Remove(tmp)
		return have, fmt.Errorf("writing %s: %w", tmp, err)
	case rf.Size > 0 && have < rf.Size:
		return have, &netError{io.ErrUnexpectedEOF}
	}
	return have, nil
}

// readErrMarker tells read errors (the network) from write errors (the disk).
type readErrMarker struct{ r io.Reader }

type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

func (m *readErrMarker) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// get sends a GET with the token and a Range from offset, mapping hub
// statuses to sentinel errors.
func (o FetchOptions) get(ctx context.Context, u string, offset int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	req.Header.Set("User-Agent", "toy")
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, &netError{err}
	}
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent:
		return resp, nil
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		if o.Token == "" {
			return nil, fmt.Errorf("%w (HTTP %d): the repo is gated or private; set HF_TOKEN to a token that has access", ErrUnauthorized, resp.StatusCode)
		}
		return nil, fmt.Errorf("%w (HTTP %d): HF_TOKEN has no access to this repo; accept its terms on the hub, or use another token", ErrUnauthorized, resp.StatusCode)
	case http.StatusNotFound:
		return nil, fmt.Errorf("%w on the hub (HTTP 404 for %s)", ErrNotFound, u)
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return nil, &netError{fmt.Errorf("HTTP %d from %s", resp.StatusCode, u)}
	}
	return nil, fmt.Errorf("HTTP %d from %s", resp.StatusCode, u)
}

// link points snap at blob with a relative symlink, as huggingface_hub does.
func link(blob, snap string) error {
	if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(snap), blob)
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(snap); err == nil && cur == rel {
		return nil
	}
	tmp := snap + ".toy-link"
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, snap)
}

// writeAtomic writes a small file through a temporary name.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".toy-tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// gitBlobID returns the git object id of the file's contents.
func gitBlobID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", st.Size())
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var h hash.Hash = sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
