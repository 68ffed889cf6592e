// Help, --version, --manifest and exit statuses: what every command shares.

package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/toyml/toy/toy/defaultmodel"
)

// version is set at build time:
// go build -ldflags "-X github.com/toyml/toy/toy/cli.version=v0.1.0" ./cmd/toy.
var version = ""

// Exit statuses.
const (
	exitOK       = 0 // it worked
	exitFailure  = 1 // the input was fine but something failed: the network, the disk, a checksum
	exitBadInput = 2 // a bad flag, argument, or model file
)

// errFailure marks errors that exit with status 1 rather than 2.
var errFailure = errors.New("failure")

type failureError struct{ err error }

func (e failureError) Error() string        { return e.err.Error() }
func (e failureError) Unwrap() error        { return e.err }
func (e failureError) Is(target error) bool { return target == errFailure }

// failure marks err as a failure (exit status 1), not bad input.
func failure(err error) error {
	if err == nil {
		return nil
	}
	return failureError{err}
}

// exitStatus maps a command's error to the process exit status: 1 for what
// failed on the machine (marked with failure, or an I/O error the operating
// system gave: a full disk, a read-only file system, a permission), 2 for
// the rest, which is bad input (flags, arguments, a missing or malformed
// file).
func exitStatus(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errFailure), machineFailure(err):
		return exitFailure
	}
	return exitBadInput
}

// machineFailures are the system errors that say the machine, not the
// input, is at fault. A missing file (ENOENT) or a path through a file
// (ENOTDIR) is not among them: those are a path the user gave.
var machineFailures = []error{
	fs.ErrPermission, // EACCES, EPERM
	syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO, syscall.EFBIG,
	syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EBUSY, syscall.ETXTBSY,
}

func machineFailure(err error) bool {
	for _, target := range machineFailures {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// commandDoc documents one command for help and the manifest.
type commandDoc struct {
	Name    string
	Usage   string
	Summary string
	Flags   func() *flag.FlagSet // the command's flags, unparsed
}

// docs lists the commands in the order help shows them. Commands missing from
// the commands map are left out; commands missing here are shown by name.
var docs = []commandDoc{
	{"infer", `toy infer [MODEL] [--prompt-ids "1 2 3" | --prompt TEXT] [--n 16] [sampling flags] [--format json | --schema FILE | --grammar-file FILE] [--threads N] [--json]`,
		"generate tokens after a prompt (no prompt: after the BOS token)", inferFlagsDoc},
	{"chat", "toy chat [MODEL] [--system TEXT] [--n 1024] [--ctx 4096] [sampling flags] [--format json | --schema FILE | --grammar-file FILE] [--device cuda]",
		"talk with a model in the terminal, a turn per line, through its chat template (stdout gets the replies)", chatFlagsDoc},
	{"eval", `toy eval [MODEL] (--prompt-ids "1 2 3" | --prompt TEXT | --file FILE) [--top-k 5] [--threads N] [--json]`,
		"log-probabilities of a prompt's tokens with the top-k alternatives, or a file's perplexity", evalFlagsDoc},
	{"tokenize", `toy tokenize [MODEL] TEXT [--special] [--bos] [--json]`,
		"the token ids and pieces of a text", tokenizeFlagsDoc},
	{"imatrix", imatrixUsage, "measure which input columns of each weight matrix a model leans on, over a text, for quantize --imatrix (llama-imatrix's file)", imatrixFlagsDoc},
	{"quantize", quantizeUsage, "convert a model to one of llama.cpp's file types (Q4_K_M, IQ4_XS, Q8_0, …), as llama-quantize writes it", func() *flag.FlagSet { fs, _ := quantizeFlagSet(); return fs }},
	{"list", "toy list [--json]", "list the models on this machine: the built-in one, the runs/*/model.gguf of this directory, own dirs, Hugging Face, Ollama, LM Studio", listFlags},
	{"fetch", "toy fetch OWNER/REPO [FILE] [--revision REV] [--json]", "download a GGUF file from Hugging Face into its cache; without FILE, list the repo's GGUF files", fetchFlags},
	{"describe", "toy describe MODEL [--json]", "print the model's algorithm card (Phuong & Hutter pseudocode) from its metadata", describeFlags},
	{"card", "toy card code FILE | toy card parse FILE [--json]", "read a card (from toy describe) back: the Go that constructs its Config, or the Config", cardFlags},
	{"new", "toy new DIR [--toy TOYDIR]", "create a lab: a Go module with its own primitives, blocks, architecture and recipe, and toy's CLI with them registered (go run . train … --arch capped)", newFlags},
	{"train", trainUsage, "train a model: from scratch, from a model (warm start), or a LoRA/QLoRA adapter; each run writes its directory (--out), which --resume continues", trainFlagsDoc},
	{"runs", "toy runs [list | show ID | plot ID -o loss.png | export ID -o OUT.gguf [--type q8_0]] [--dir runs] [--json]", "list training runs, show one, plot its loss, or export its latest checkpoint as a model", runsFlagsDoc},
	{"lora", "toy lora merge BASE.gguf ADAPTER.gguf -o OUT.gguf", "merge a LoRA adapter into its base model", loraFlagsDoc},
	{"classify", "toy classify MODEL.gguf IMAGE [--top-k 5] [--device cpu|cuda] [--json]",
		"classify a PNG, JPEG or GIF image with a ViT classifier", classifyFlagsDoc},
	{"convert", "toy convert HF_DIR OUT.gguf [--type f32|f16|bf16|q8_0]",
		"convert a Hugging Face ViT image classifier (config.json, model.safetensors) to GGUF", convertFlagsDoc},
	{"embed", embedUsage, "text embeddings (BERT, all-MiniLM, bge, nomic-embed-text …, or a decoder's hidden states), one vector per text", embedFlagsDoc},
	{"rerank", rerankUsage, "rank documents by how well they answer a query, with a reranker (bge-reranker, ms-marco cross-encoders)", rerankFlagsDoc},
	{"serve", "toy serve [MODEL] [--addr 127.0.0.1:8080] [--ctx N] [--device cuda] [--threads N] [--chat-template-file F]",
		"an HTTP server over one model that speaks OpenAI's API (/v1/chat/completions, /v1/completions, /v1/responses, /v1/models: streaming, n choices, logprobs, penalties and logit_bias, tool calls, fill in the middle) and Ollama's (/api/chat, /api/generate, /api/tags, /api/show, /api/ps, /api/version), with /metrics (Prometheus) and /slots, so OpenAI and Ollama clients work against it; see go doc ./toy/serve", serveFlagsDoc},
	{"toysh", "toy toysh [-e CODE] [FILE.go [ARGS…]] | toy toysh kernel CONN.json | toy toysh install-kernel",
		"toysh with this binary's architectures: a Go REPL with toy preloaded, a script runner, the Jupyter kernel", nil},
	{"install", "toy install", "check that each backend loads and passes its self-test; register the Jupyter kernel", installFlags},
}

// The flags of infer and eval, as their commands define them (kept here for
// help and the manifest; TestManifestFlagsAccepted checks they still exist).
func inferFlagsDoc() *flag.FlagSet { fs, _ := inferFlagSet(); return fs }

func evalFlagsDoc() *flag.FlagSet { fs, _ := evalFlagSet(); return fs }

func tokenizeFlagsDoc() *flag.FlagSet { fs, _, _, _ := tokenizeFlagSet(); return fs }

func installFlags() *flag.FlagSet { return flag.NewFlagSet("install", flag.ContinueOnError) }

func global(args []string, stdout, stderr io.Writer) (status int, done bool) {
	if len(args) == 0 {
		fmt.Fprint(stderr, helpText())
		return exitBadInput, true
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			d, ok := docFor(args[1])
			if !ok {
				fmt.Fprintf(stderr, "toy help: unknown command %q\n", args[1])
				return exitBadInput, true
			}
			fmt.Fprint(stdout, commandHelp(d))
			return exitOK, true
		}
		fmt.Fprint(stdout, helpText())
		return exitOK, true
	case "-version", "--version", "version":
		fmt.Fprintf(stdout, "toy %s (%s, %s/%s)\n", toyVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitOK, true
	case "-manifest", "--manifest":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(manifest())
		return exitOK, true
	}
	return 0, false
}

// toyVersion is the -X version, else the version of the toy module this
// program was built with (cmd/toy's own, or a lab's requirement), else "devel".
func toyVersion() string {
	if version != "" {
		return version
	}
	if v := publishedToy(); v != "" { // new.go
		return v
	}
	if m, isMain, _ := toyBuild(); isMain && strings.HasPrefix(m.Version, "v") {
		return m.Version // stamped from the checkout's VCS
	}
	return "devel"
}

// docFor returns the documentation of a command in the commands map.
func docFor(name string) (commandDoc, bool) {
	if _, ok := commands[name]; !ok {
		return commandDoc{}, false
	}
	for _, d := range docs {
		if d.Name == name {
			return d, true
		}
	}
	return commandDoc{Name: name, Usage: "toy " + name}, true
}

// listed returns the documented commands that exist, then the undocumented.
func listed() []commandDoc {
	var out []commandDoc
	for _, d := range docs {
		if _, ok := commands[d.Name]; ok {
			out = append(out, d)
		}
	}
	var rest []string
	for name := range commands {
		if !slices.ContainsFunc(docs, func(d commandDoc) bool { return d.Name == name }) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	for _, name := range rest {
		d, _ := docFor(name)
		out = append(out, d)
	}
	return out
}

func helpText() string {
	var b strings.Builder
	b.WriteString("toy runs, describes and finds transformer language models in GGUF files.\n\nCommands:\n")
	for _, d := range listed() {
		fmt.Fprintf(&b, "  %-9s %s\n", d.Name, d.Summary)
	}
	b.WriteString(`
MODEL is a path, a file name found by "toy list", an Ollama name (llama3.2, qwen2.5:0.5b),
a Hugging Face repo in the local cache (owner/repo, owner/repo/file.gguf), an LM Studio
publisher/model, or ` + defaultmodel.Name + `, the small model built into toy (what infer, eval, chat,
tokenize and serve use when MODEL is left out).

Run "toy help COMMAND" or "toy COMMAND --help" for a command's usage and flags;
"toy --version" for the version; "toy --manifest" for all of this as JSON.
Exit status: 0 ok, 1 failure (network, disk, checksum), 2 bad input.
`)
	return b.String()
}

// commandHelp is the usage, summary and flags of one command.
func commandHelp(d commandDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s.\n", d.Usage, upperFirst(d.Summary))
	if d.Flags != nil {
		fs := d.Flags()
		if n := countFlags(fs); n > 0 {
			b.WriteString("\nFlags:\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

// parseFlags parses a command's flags; -h or --help prints the command's help
// to stdout and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	help := func() ([]string, error) {
		d := commandDoc{Name: fs.Name(), Usage: "toy " + fs.Name()}
		if i := slices.IndexFunc(docs, func(d commandDoc) bool { return d.Name == fs.Name() }); i >= 0 {
			d = docs[i] // not docFor: the commands map refers to this function
		}
		d.Flags = func() *flag.FlagSet { return fs }
		fmt.Fprint(stdout, commandHelp(d))
		return nil, flag.ErrHelp
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelpArg(a) {
			return help()
		}
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) { // --h, -help=…: what the flag package takes for help
		return help()
	}
	return pos, err
}

// The manifest: a machine-readable description of the CLI (toy/manifest-v1).
type manifestFlag struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Default string `json:"default"`
	Usage   string `json:"usage"`
}

type manifestCommand struct {
	Name    string         `json:"name"`
	Usage   string         `json:"usage"`
	Summary string         `json:"summary"`
	Flags   []manifestFlag `json:"flags"`
}

type manifestExit struct {
	Code    int    `json:"code"`
	Meaning string `json:"meaning"`
}

type manifestDoc struct {
	Format    string            `json:"format"`
	Version   string            `json:"version"`
	Commands  []manifestCommand `json:"commands"`
	ExitCodes []manifestExit    `json:"exit_codes"`
	Errors    string            `json:"errors"`
}

func manifest() manifestDoc {
	m := manifestDoc{
		Format: "toy/manifest-v1", Version: toyVersion(),
		ExitCodes: []manifestExit{
			{exitOK, "ok"},
			{exitFailure, "failure: the network, the disk, a checksum, an interrupted download"},
			{exitBadInput, "bad input: flags, arguments, a missing or malformed model"},
		},
		Errors: "one line on stderr: toy COMMAND: MESSAGE",
	}
	for _, d := range listed() {
		c := manifestCommand{Name: d.Name, Usage: d.Usage, Summary: d.Summary, Flags: []manifestFlag{}}
		if d.Flags != nil {
			d.Flags().VisitAll(func(f *flag.Flag) {
				c.Flags = append(c.Flags, manifestFlag{Name: f.Name, Type: flagType(f), Default: f.DefValue, Usage: f.Usage})
			})
		}
		m.Commands = append(m.Commands, c)
	}
	return m
}

// flagType names a flag's type from its flag.Value: bool, int, string, …
func flagType(f *flag.Flag) string {
	t := fmt.Sprintf("%T", f.Value)
	t = strings.TrimPrefix(strings.TrimSuffix(t, "Value"), "*flag.")
	if t == "float64" {
		return "float"
	}
	return t
}
