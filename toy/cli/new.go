// toy new: scaffold a lab — a Go module that is a workbench for toy, with
// primitives, blocks, an architecture and a recipe of its own, and toy's
// whole CLI with its architectures registered — buildable where it is made.

package cli

import (
	"cmp"
	"embed"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// The lab's files, with the module path example.com/lab standing for the
// lab's own; ".tmpl" keeps them out of toy's packages.
//
//go:embed all:lab
var labFiles embed.FS

const (
	toyModule   = "github.com/toyml/toy"
	labModule   = "example.com/lab"
	zeroVersion = "v0.0.0-00010101000000-000000000000" // required beside a replace directive
)

func newFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	fs.String("toy", "", "the toy checkout the lab builds against, by a replace directive (default: $TOY_SRC, else the checkout this toy was built from)")
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
	src, err := findToy(flagString(fs, "toy"))
	if err != nil {
		return err
	}
	module := moduleName(dir)
	files, err := labTree(module, src)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return failure(err)
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			return failure(err)
		}
	}
	how := "toy " + src.version
	if src.dir != "" {
		how = "the toy checkout " + src.dir
	}
	fmt.Fprintf(stdout, "created the lab %s in %s (%d files), built against %s\nnext:\n", module, dir, len(files), how)
	for _, c := range labCommands(dir, src) {
		fmt.Fprintf(stdout, "  %s\n", c)
	}
	return nil
}

// labCommands are the commands toy new prints to try the lab, one a line
// (TestNewLab runs them).
func labCommands(dir string, src labToy) []string {
	cmds := []string{"cd " + shellQuote(dir)}
	if src.dir == "" {
		cmds = append(cmds, "go mod tidy") // a published toy: fetch its requirements and their checksums
	}
	return append(cmds,
		"go test ./...",
		"go run ./recipes",
		"go run . train from-scratch --arch capped --data data/tiny.txt --layers 2 --lr 3e-3 --steps 100 --out runs/first",
		`go run . infer runs/first/model.gguf --prompt "A small model" --n 40`,
		"go run . eval runs/first/model.gguf --file data/tiny.txt",
		"go run . describe runs/first/model.gguf",
		"go run . serve runs/first/model.gguf")
}

// labTree returns the lab's files by slash-separated path: the embedded
// templates with the module path put in, and go.mod (with go.sum when toy is
// a checkout).
func labTree(module string, src labToy) (map[string]string, error) {
	files := map[string]string{}
	err := fs.WalkDir(labFiles, "lab", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := labFiles.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(p, "lab/"), ".tmpl")
		files[name] = strings.ReplaceAll(string(b), labModule, module)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if src.dir == "" {
		files["go.mod"] = fmt.Sprintf("module %s\n\ngo 1.26.0\n\nrequire %s %s\n", module, toyModule, src.version)
		return files, nil
	}
	// From a checkout: toy by a replace directive, toy's own requirements
	// listed and its go.sum copied, so the lab builds as it is, offline from
	// the module cache (go mod tidy later keeps what the lab uses).
	gomod, err := os.ReadFile(filepath.Join(src.dir, "go.mod"))
	if err != nil {
		return nil, failure(err)
	}
	goVersion, reqs := requirements(string(gomod))
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n\nrequire %s %s\n", module, cmp.Or(goVersion, "1.26.0"), toyModule, zeroVersion)
	if len(reqs) > 0 {
		b.WriteString("\nrequire (\n")
		for _, r := range reqs {
			fmt.Fprintf(&b, "\t%s // indirect\n", r)
		}
		b.WriteString(")\n")
	}
	fmt.Fprintf(&b, "\nreplace %s => %s\n", toyModule, modQuote(src.dir))
	files["go.mod"] = b.String()
	if sum, err := os.ReadFile(filepath.Join(src.dir, "go.sum")); err == nil {
		files["go.sum"] = string(sum)
	}
	return files, nil
}

// requirements reads the go version and the "path version" requirements of
// a go.mod file.
func requirements(gomod string) (goVersion string, reqs []string) {
	inBlock := false
	for line := range strings.Lines(gomod) {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "go":
			goVersion = f[1]
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			inBlock = true
		case inBlock && len(f) == 1 && f[0] == ")":
			inBlock = false
		case inBlock && len(f) == 2:
			reqs = append(reqs, f[0]+" "+f[1])
		case len(f) == 3 && f[0] == "require":
			reqs = append(reqs, f[1]+" "+f[2])
		}
	}
	return goVersion, reqs
}

// labToy is what a lab's go.mod points at: a toy checkout (a replace
// directive) or a published version of toy.
type labToy struct{ dir, version string }

// findToy finds the toy a new lab builds against: --toy or $TOY_SRC; the
// published version this program was built from; else, for a development
// build, the checkout it was built from.
func findToy(flagDir string) (labToy, error) {
	if dir := cmp.Or(flagDir, os.Getenv("TOY_SRC")); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil || !isToyRoot(abs) {
			return labToy{}, fmt.Errorf("%w: --toy %s: not a toy checkout (no go.mod of module %s)", errUsage, dir, toyModule)
		}
		return labToy{dir: abs}, nil
	}
	if v := publishedToy(); v != "" {
		return labToy{version: v}, nil
	}
	for _, start := range checkoutHints() {
		if root := toyRoot(start); root != "" {
			return labToy{dir: root}, nil
		}
	}
	return labToy{}, fmt.Errorf("%w: this toy is a development build and no toy checkout was found above it, its source or the working directory; give --toy DIR (or TOY_SRC)", errUsage)
}

// toyBuild returns the toy module of this program's build information: the
// main module (cmd/toy) or a dependency (a lab's binary).
func toyBuild() (m *debug.Module, isMain bool, bi *debug.BuildInfo) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, false, nil
	}
	if bi.Main.Path == toyModule {
		return &bi.Main, true, bi
	}
	for _, d := range bi.Deps {
		if d.Path == toyModule {
			return d, false, bi
		}
	}
	return nil, false, bi
}

// publishedToy returns the version of toy this program was built from when
// it is a published one ("" for a build in a checkout, or with toy replaced
// by one).
func publishedToy() string {
	m, isMain, bi := toyBuild()
	switch {
	case m == nil, m.Replace != nil, !strings.HasPrefix(m.Version, "v"), strings.HasSuffix(m.Version, "+dirty"), m.Version == zeroVersion:
		return ""
	case isMain && slices.ContainsFunc(bi.Settings, func(s debug.BuildSetting) bool { return s.Key == "vcs" }):
		return "" // stamped from the checkout it was built in
	}
	return m.Version
}

// checkoutHints lists where a development build's checkout may be, the
// surest first: the directory a lab's go.mod replaced toy with, this source
// file's directory as compiled, the executable's and the working directory.
func checkoutHints() []string {
	var hints []string
	if m, _, _ := toyBuild(); m != nil && m.Replace != nil && m.Replace.Version == "" && filepath.IsAbs(m.Replace.Path) {
		hints = append(hints, m.Replace.Path)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) { // not under -trimpath
		hints = append(hints, filepath.Dir(file))
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			hints = append(hints, filepath.Dir(exe))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		hints = append(hints, wd)
	}
	return hints
}

// toyRoot walks up from dir to the root of a toy checkout, or returns "".
// Copies in the module cache (NAME@VERSION) are not checkouts.
func toyRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := dir; ; d = filepath.Dir(d) {
		if isToyRoot(d) && !strings.Contains(filepath.Base(d), "@") {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// isToyRoot reports whether dir holds the go.mod of module github.com/toyml/toy.
func isToyRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			p, err := strconv.Unquote(f[1])
			return f[1] == toyModule || err == nil && p == toyModule
		}
	}
	return false
}

// modQuote quotes a path for go.mod when it needs it.
func modQuote(p string) string {
	if strings.ContainsAny(p, " \t\"'`(){}[],") || strings.Contains(p, "//") {
		return strconv.Quote(p)
	}
	return p
}

// shellQuote quotes a path for sh when it needs it.
func shellQuote(p string) string {
	if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+@:") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// moduleName makes a module path from the directory's name.
func moduleName(dir string) string {
	base := strings.ToLower(path.Base(filepath.ToSlash(filepath.Clean(dir))))
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
		s = "lab"
	}
	return s
}
