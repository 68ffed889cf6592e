// toy new: scaffold an experiment tree or a Go module that uses toy.

package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func newFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	fs.Bool("lib", false, "a Go module with an experiment package, a hello command and a per-device build script")
	fs.String("toy", "", "a local toy checkout to build against (a replace directive; default $TOY_SRC)")
	return fs
}

func runNew(args []string, stdout io.Writer) error {
	fs := newFlags()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want exactly one DIR argument, got %d", errUsage, len(pos))
	}
	dir := pos[0]
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty; choose a new directory", dir)
	}
	toyDir := flagString(fs, "toy")
	if toyDir == "" {
		toyDir = os.Getenv("TOY_SRC")
	}
	if toyDir != "" {
		abs, err := filepath.Abs(toyDir)
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
			return fmt.Errorf("--toy %s: not a toy checkout (no go.mod)", toyDir)
		}
		toyDir = abs
	}
	module := moduleName(dir)
	files := map[string]string{
		"go.mod":        goMod(module, toyDir),
		"runs/.gitkeep": "",
		"data/.gitkeep": "",
		".gitignore":    "/hello\n/bin/\n/runs/*/\n",
		"README.md":     strings.ReplaceAll(readmeTemplate, "NAME", module),
		"main.go":       helloMain,
	}
	run := "go mod tidy && go build -o hello . && TOY_LAYERS=4 TOY_RUN=first ./hello"
	if flagBool(fs, "lib") {
		pkg := packageName(module)
		delete(files, "main.go")
		files["experiment.go"] = strings.ReplaceAll(experimentGo, "PKG", pkg)
		files["cmd/hello/main.go"] = strings.ReplaceAll(strings.ReplaceAll(libHelloMain, "PKG", pkg), "MODULE", module)
		files["build.sh"] = buildScript
		files["README.md"] = strings.ReplaceAll(libReadmeTemplate, "NAME", module)
		run = "go mod tidy && ./build.sh && TOY_RUN=first ./bin/hello-cpu"
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return failure(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(files[name]), mode); err != nil {
			return failure(err)
		}
		fmt.Fprintf(stdout, "created %s\n", filepath.Join(dir, filepath.FromSlash(name)))
	}
	if toyDir == "" && !strings.HasPrefix(toyVersion(), "v") {
		fmt.Fprintf(stdout, "note: this toy is a development build; add a replace line to %s pointing at your toy checkout (or rerun with --toy DIR)\n", filepath.Join(dir, "go.mod"))
	}
	fmt.Fprintf(stdout, "next: cd %s && %s\n", dir, run)
	return nil
}

// moduleName makes a module path from the directory's name.
func moduleName(dir string) string {
	base := strings.ToLower(filepath.Base(filepath.Clean(dir)))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	s := strings.Trim(b.String(), "-.")
	if s == "" {
		s = "experiment"
	}
	return s
}

// packageName makes a Go package name from a module name.
func packageName(module string) string {
	var b strings.Builder
	for _, r := range module {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "x" + s
	}
	return s
}

func goMod(module, toyDir string) string {
	v := toyVersion()
	if !strings.HasPrefix(v, "v") {
		v = "v0.0.0-00010101000000-000000000000"
	}
	s := fmt.Sprintf("module %s\n\ngo 1.26.0\n\nrequire github.com/toyml/toy %s\n", module, v)
	if toyDir != "" {
		s += fmt.Sprintf("\nreplace github.com/toyml/toy => %s\n", toyDir)
	}
	return s
}

const readmeTemplate = `# NAME

An experiment with toy.

- main.go: the hello recipe. It reads its hyperparameters from the environment
  (TOY_LAYERS, TOY_EMBED, TOY_HEADS, TOY_KV_HEADS, TOY_FFN, TOY_VOCAB,
  TOY_CONTEXT) so one build serves many runs, and writes each run to runs/$TOY_RUN/.
- data/: datasets. runs/: one directory per run.

    go mod tidy && go build -o hello .
    TOY_RUN=small ./hello
    TOY_RUN=deep TOY_LAYERS=8 ./hello
`

const libReadmeTemplate = `# NAME

A Go module that uses toy.

- experiment.go: the experiment as a library (Config, ConfigFromEnv, Run).
- cmd/hello: a command that runs it with hyperparameters from the environment.
- build.sh: one binary per device in bin/ (DEVICES="cpu cuda metal" by default).

    go mod tidy && ./build.sh
    TOY_RUN=first ./bin/hello-cpu
`

const helloMain = `// hello: the smallest experiment. It reads its hyperparameters from the
// environment, so one build serves many runs:
//
//	go build -o hello . && TOY_RUN=deep TOY_LAYERS=8 ./hello
//
// Each run writes runs/$TOY_RUN/: the configuration and the model's
// algorithm card.
package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models/llama"
)

// env reads an integer hyperparameter, or returns def.
func env(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hello: %s=%q is not an integer\n", name, s)
			os.Exit(2)
		}
		return v
	}
	return def
}

func main() {
	embed, heads := env("TOY_EMBED", 64), env("TOY_HEADS", 4)
	cfg := llama.Config{
		Arch:          "llama",
		VocabSize:     env("TOY_VOCAB", 256),
		ContextLength: env("TOY_CONTEXT", 128),
		Embed:         embed,
		Layers:        env("TOY_LAYERS", 2),
		FFN:           env("TOY_FFN", 4*embed),
		Heads:         heads,
		KVHeads:       env("TOY_KV_HEADS", heads),
		HeadDim:       embed / max(heads, 1),
		RopeDim:       embed / max(heads, 1),
		RopeBase:      10000,
		NormEps:       1e-5,
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "hello: %v\n", err)
		os.Exit(2)
	}
	run := os.Getenv("TOY_RUN")
	if run == "" {
		run = time.Now().UTC().Format("20060102-150405")
	}
	dir := filepath.Join("runs", run)
	c := llama.New(cfg).Card()
	js, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'), 0o644)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "card.txt"), []byte(c.Render()), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "hello: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Printf("hello from toy: run %s, a %d-layer llama with %s parameters; card in %s\n",
		run, cfg.Layers, card.HumanCount(c.ParamCount), filepath.Join(dir, "card.txt"))
}
`

const experimentGo = `// Package PKG is an experiment with toy, written as a library so that tests,
// notebooks and the commands in cmd/ share it.
package PKG

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/models/llama"
)

// Config holds the experiment's hyperparameters.
type Config struct {
	Run    string // the run's name: its directory under runs/
	Layers int
	Embed  int
	Heads  int
}

// ConfigFromEnv reads TOY_RUN, TOY_LAYERS, TOY_EMBED and TOY_HEADS, with defaults.
func ConfigFromEnv() (Config, error) {
	c := Config{Run: os.Getenv("TOY_RUN"), Layers: 2, Embed: 64, Heads: 4}
	if c.Run == "" {
		c.Run = "default"
	}
	for name, dst := range map[string]*int{"TOY_LAYERS": &c.Layers, "TOY_EMBED": &c.Embed, "TOY_HEADS": &c.Heads} {
		if s := os.Getenv(name); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil {
				return c, fmt.Errorf("%s=%q is not an integer", name, s)
			}
			*dst = v
		}
	}
	return c, nil
}

// Model returns the model configuration the experiment builds.
func (c Config) Model() llama.Config {
	hd := c.Embed / max(c.Heads, 1)
	return llama.Config{Arch: "llama", VocabSize: 256, ContextLength: 128, Embed: c.Embed, Layers: c.Layers,
		FFN: 4 * c.Embed, Heads: c.Heads, KVHeads: c.Heads, HeadDim: hd, RopeDim: hd, RopeBase: 10000, NormEps: 1e-5}
}

// Run performs the experiment in runs/<c.Run> under root and returns the
// model's algorithm card.
func Run(root string, c Config) (*card.Card, error) {
	mc := c.Model()
	if err := mc.Validate(); err != nil {
		return nil, err
	}
	k := llama.New(mc).Card()
	dir := filepath.Join(root, "runs", c.Run)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return k, os.WriteFile(filepath.Join(dir, "card.txt"), []byte(k.Render()), 0o644)
}
`

const libHelloMain = `// Command hello runs the experiment with hyperparameters from the environment.
package cli

import (
	"fmt"
	"os"

	"github.com/toyml/toy/toy/card"

	"MODULE"
)

// device is set per binary by build.sh (-ldflags "-X main.device=cuda").
var device = "cpu"

func main() {
	c, err := PKG.ConfigFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hello: %v\n", err)
		os.Exit(2)
	}
	k, err := PKG.Run(".", c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hello: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("hello from toy on %s: run %s, %d layers, %s parameters\n", device, c.Run, c.Layers, card.HumanCount(k.ParamCount))
}
`

const buildScript = `#!/bin/sh
# build.sh: one binary per device in bin/, hello-<device>.
# DEVICES="cpu cuda metal" by default; metal binaries are built for macOS on arm64.
set -eu
cd "$(dirname "$0")"
mkdir -p bin
for dev in ${DEVICES:-cpu cuda metal}; do
	case $dev in
	metal) goos=darwin goarch=arm64 ;;
	*) goos=$(go env GOOS) goarch=$(go env GOARCH) ;;
	esac
	echo "building bin/hello-$dev ($goos/$goarch)"
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -ldflags "-X main.device=$dev" -o "bin/hello-$dev" ./cmd/hello
done
`
