// toy fetch: download a GGUF file from Hugging Face into its cache.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/schollz/progressbar/v3"

	"github.com/toyml/toy/toy/hub"
)

func fetchFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fs.String("revision", "main", "branch, tag or commit")
	fs.Bool("json", false, "print JSON (toy/fetch-v1); no progress bar")
	fs.Bool("quiet", false, "no progress bar")
	return fs
}

type fetchOutput struct {
	Format    string         `json:"format"`
	Repo      string         `json:"repo"`
	Commit    string         `json:"commit,omitempty"`
	File      string         `json:"file,omitempty"`
	Path      string         `json:"path,omitempty"`
	Files     []hub.RepoFile `json:"files,omitempty"`
	Suggested string         `json:"suggested,omitempty"`
}

func runFetch(args []string, stdout io.Writer) error {
	fs := fetchFlags()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: want OWNER/REPO [FILE], got %d arguments", errUsage, len(pos))
	}
	asJSON := flagBool(fs, "json")
	opts := hub.FetchOptions{Revision: flagString(fs, "revision")}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	repo := pos[0]
	if len(pos) == 1 {
		r, err := hub.RepoFiles(ctx, repo, opts)
		if err != nil {
			return fetchError(err)
		}
		files := r.GGUF()
		out := fetchOutput{Format: "toy/fetch-v1", Repo: repo, Commit: r.Commit, Files: files}
		if f, ok := hub.Suggest(files); ok {
			out.Suggested = f.Path
		}
		if out.Files == nil {
			out.Files = []hub.RepoFile{}
		}
		if asJSON {
			return json.NewEncoder(stdout).Encode(out)
		}
		if len(files) == 0 {
			return fmt.Errorf("%w: %s has no .gguf files", hub.ErrNotFound, repo)
		}
		fmt.Fprintf(stdout, "%s has %d GGUF files:\n", repo, len(files))
		for _, f := range files {
			fmt.Fprintf(stdout, "  %-50s %s\n", f.Path, humanBytes(f.Size))
		}
		fmt.Fprintf(stdout, "toy runs F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, the k-quant (Q2_K … Q6_K, e.g. Q4_K_M), IQ4_NL, IQ4_XS and MXFP4 weights; try:\n  toy fetch %s %s\n", repo, out.Suggested)
		return nil
	}
	if !asJSON && !flagBool(fs, "quiet") {
		opts.Progress = func(file string, total, done int64) io.Writer {
			bar := progressbar.NewOptions64(total,
				progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(file),
				progressbar.OptionShowBytes(true),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(100e6),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }),
			)
			bar.Set64(done)
			return bar
		}
	}
	path, err := hub.Fetch(ctx, repo, pos[1], opts)
	if err != nil {
		return fetchError(err)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(fetchOutput{Format: "toy/fetch-v1", Repo: repo, File: pos[1], Path: path})
	}
	fmt.Fprintln(stdout, path)
	return nil
}

// fetchError sorts errors into bad input (a repo or file that is not there,
// a gated repo without a token) and failures (everything else).
func fetchError(err error) error {
	if errors.Is(err, hub.ErrNotFound) || errors.Is(err, hub.ErrUnauthorized) {
		return err
	}
	return failure(err)
}
