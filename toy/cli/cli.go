// Package cli is toy's command line: every command of the toy program
// (infer, eval, train, serve, describe, new …) behind one function, Main, so
// that cmd/toy and each lab's main.go (made by toy new) run the same CLI —
// a lab's with its own architectures registered first:
//
//	import (
//		"os"
//
//		"github.com/toyml/toy/toy/cli"
//		_ "example.com/mylab/archs" // registers the lab's architectures
//	)
//
//	func main() { os.Exit(cli.Main(os.Args[1:])) }
//
// The program is called "toy" in usage and error messages, whichever binary
// runs it.
//
// # Error Handling
//
// Every error is one line on stderr, "toy COMMAND: MESSAGE", and an exit
// status: 2 for bad input (flags, arguments, a missing or malformed model),
// 1 for a failure of the machine (the network, a checksum, the disk: full,
// read-only or not permitted; a run directory another run holds). A panic
// inside a command is a bug; it is reported as "toy: internal error" with
// status 2, never a crash.
//
// # Models
//
// A MODEL argument is anything toy/hub resolves (a path, a name toy list
// shows) or the name of the model built into toy, "toy-go"
// (defaultmodel.Name), which is also the model of infer, eval, chat,
// tokenize and serve when MODEL is left out.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/toyml/toy/interp/shell"
)

// errUsage marks errors in how the command was called.
var errUsage = errors.New("usage")

var commands = map[string]func(args []string, stdout io.Writer) error{
	"infer":    runInfer,
	"eval":     runEval,
	"tokenize": runTokenize,
	"quantize": runQuantize,
	"imatrix":  runImatrix,  // imatrix.go
	"list":     runList,     // list.go
	"fetch":    runFetch,    // fetch.go
	"describe": runDescribe, // describe.go
	"card":     runCard,     // card.go
	"new":      runNew,      // new.go
	"train":    runTrain,
	"runs":     runRuns,
	"lora":     runLoRA,
	"install":  runInstall,  // install.go
	"serve":    runServe,    // serve.go
	"chat":     runChat,     // chat.go
	"classify": runClassify, // classify.go
	"convert":  runConvert,  // classify.go
	"embed":    runEmbed,    // embed.go
	"rerank":   runRerank,   // rerank.go
	"toysh":    nil,         // run hands it to interp/shell, which owns the terminal and its messages
}

// Main runs the command args names (the arguments after the program name,
// os.Args[1:]) with the standard streams and returns the exit status.
// TOY_CPUPROFILE=FILE writes a CPU profile of the command (go tool pprof).
func Main(args []string) int {
	if path := os.Getenv("TOY_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	return run(args, os.Stdout, os.Stderr)
}

// run executes one command and returns the exit status; failures (including
// panics, which would be bugs) become one line on stderr and status 2.
func run(args []string, stdout, stderr io.Writer) (status int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "toy: internal error: %v\n", p)
			status = 2
		}
	}()
	if status, done := global(args, stdout, stderr); done { // no command, help, --version, --manifest (global.go)
		return status
	}
	if args[0] == "toysh" { // the REPL, a script, or the Jupyter kernel, with this binary's architectures
		if len(args) == 2 && (args[1] == "-h" || args[1] == "--help" || args[1] == "-help") {
			d, _ := docFor("toysh")
			fmt.Fprint(stdout, commandHelp(d))
			return 0
		}
		return shell.Main(args[1:])
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toy: unknown command %q\n\n%s", args[0], helpText()) // the usage --help prints
		return exitBadInput
	}
	if err := cmd(args[1:], stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "toy %s: %v\n", args[0], err)
		return exitStatus(err) // 2 bad input, 1 failure (global.go)
	}
	return 0
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("toy infer MODEL --n 4" and "toy infer --n 4 MODEL") and returns
// the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err // flag.ErrHelp too: parseFlags prints the command's help
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parseIDs reads token ids separated by spaces or commas.
func parseIDs(s string) ([]int32, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' })
	ids := make([]int32, 0, len(fields))
	for _, f := range fields {
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("--prompt-ids: %q is not a token id", f)
		}
		ids = append(ids, int32(v))
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("--prompt-ids: no token ids given")
	}
	return ids, nil
}

// oneModel checks that exactly one positional argument (the model) was given.
func oneModel(pos []string) (string, error) {
	if len(pos) != 1 {
		return "", fmt.Errorf("%w: want exactly one MODEL argument, got %d", errUsage, len(pos))
	}
	return pos[0], nil
}

// encodeJSON writes v as one line of JSON, leaving <, > and & as they are
// (token pieces such as "<|endoftext|>" stay readable).
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
