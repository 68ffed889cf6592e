// Package shell is toysh, toy's interactive shell, as a package: a Go REPL
// (yaegi) with toy's packages preloaded, a script runner, and a Jupyter
// kernel. cmd/toysh is Main; toy's CLI offers it as `toy toysh`, and so does
// every lab's main.go, which runs toy's CLI.
//
//	toysh                     the REPL (line editing and history on a terminal)
//	toysh FILE.go [ARGS…]     run a script; os.Args is FILE.go and ARGS
//	toysh -e 'CODE'           evaluate one cell and print its value
//	toysh kernel CONN.json    serve Jupyter (started by Jupyter, see install-kernel)
//	toysh install-kernel      register the kernel in the user's Jupyter data directory
package shell

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toyml/toy/interp"
	"github.com/toyml/toy/interp/kernel"
)

// Main runs toysh with args, the command line after the program's name,
// and returns the exit status: 0, 1 when the code or the kernel fails, 2
// for a usage error. The usage text and the kernel that install-kernel
// registers name the command as it was typed: os.Args up to args, "toysh"
// from cmd/toysh and "toy toysh" from toy's CLI.
func Main(args []string) int {
	sh := &shell{cmd: command(os.Args, args), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	return sh.main(args)
}

// command returns the words that ran Main with args: os.Args without args
// at its end, the program by its base name. Where os.Args does not end in
// args (Main called from elsewhere), it is "toysh".
func command(osArgs, args []string) []string {
	n := len(osArgs) - len(args)
	if n < 1 || !slices.Equal(osArgs[n:], args) {
		return []string{"toysh"}
	}
	words := slices.Clone(osArgs[:n])
	words[0] = filepath.Base(words[0])
	return words
}

// A shell is one run of toysh.
type shell struct {
	cmd            []string // the words that run toysh: "toysh", or "toy", "toysh"
	stdin          io.Reader
	stdout, stderr io.Writer
	live           map[string]string // a live display's ID → the file display keeps it in
}

func (sh *shell) name() string { return strings.Join(sh.cmd, " ") }

// flags returns toysh's flags, in a set of their own: flags other packages
// register on flag.CommandLine (testing/quick's -quickchecks …) are not
// toysh's.
func (sh *shell) flags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(sh.name(), flag.ContinueOnError)
	fs.SetOutput(sh.stderr)
	expr := fs.String("e", "", "evaluate `code` and print its value")
	fs.Usage = func() {
		name := sh.name()
		w := fs.Output()
		fmt.Fprintln(w, "usage:")
		for _, l := range [][2]string{
			{"", "the REPL: Go with toy's packages imported"},
			{" FILE.go [ARGS...]", "run a Go file; os.Args is FILE.go and ARGS"},
			{" -e code", "evaluate code and print its value"},
			{" kernel CONN.json", "serve Jupyter (Jupyter starts it; see install-kernel)"},
			{" install-kernel", "register the kernel in your Jupyter data directory"},
		} {
			fmt.Fprintf(w, "  %-*s  %s\n", len(name)+len(" FILE.go [ARGS...]"), name+l[0], l[1])
		}
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	return fs, expr
}

func (sh *shell) main(args []string) int {
	fs, expr := sh.flags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	args = fs.Args()
	var err error
	switch {
	case *expr != "":
		return sh.evalOnce(*expr)
	case len(args) >= 1 && args[0] == "kernel":
		if len(args) != 2 {
			fs.Usage()
			return 2
		}
		err = runKernel(args[1])
	case len(args) >= 1 && args[0] == "install-kernel":
		err = sh.installKernel()
	case len(args) >= 1 && (len(args) == 1 || strings.HasSuffix(args[0], ".go")):
		return sh.runScript(args[0], args[1:])
	case len(args) == 0:
		err = sh.repl()
	default:
		fs.Usage()
		return 2
	}
	if err != nil {
		fmt.Fprintf(sh.stderr, "%s: %v\n", sh.name(), err)
		return 1
	}
	return 0
}

// report prints an evaluation error as its name and message.
func (sh *shell) report(err error) {
	name, msg := interp.Describe(err)
	if name == "error" || name == "panic" || name == "SyntaxError" {
		fmt.Fprintln(sh.stderr, msg)
		return
	}
	fmt.Fprintf(sh.stderr, "%s: %s\n", name, msg)
}

// interp returns a new interpreter on the shell's streams; args are the
// script's os.Args (nil: the process's).
func (sh *shell) interp(args []string) (*interp.Interp, error) {
	return interp.New(interp.Options{Stdin: sh.stdin, Stdout: sh.stdout, Stderr: sh.stderr, Display: sh.display, Args: args})
}

// interruptible returns a context cancelled by Ctrl-C (SIGINT) while it lives.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel() }
}

// evalOnce evaluates code as one cell and prints its value.
func (sh *shell) evalOnce(code string) int {
	in, err := sh.interp(nil)
	if err != nil {
		fmt.Fprintf(sh.stderr, "%s: %v\n", sh.name(), err)
		return 1
	}
	ctx, done := interruptible()
	defer done()
	res, err := in.Eval(ctx, code)
	if err != nil {
		sh.report(err)
		return 1
	}
	if b, ok := res.Bundle(); ok {
		fmt.Fprintln(sh.stdout, b.Text)
	}
	return 0
}

// runScript runs a Go file with args after its path in os.Args.
func (sh *shell) runScript(path string, args []string) int {
	in, err := sh.interp(append([]string{path}, args...))
	if err != nil {
		fmt.Fprintf(sh.stderr, "%s: %v\n", sh.name(), err)
		return 1
	}
	ctx, done := interruptible()
	defer done()
	if _, err := in.EvalFile(ctx, path); err != nil {
		sh.report(err)
		return 1
	}
	return 0
}

func runKernel(conn string) error {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c, err := kernel.ReadConnection(conn)
	if err != nil {
		return err
	}
	k, err := kernel.New(ctx, c)
	if err != nil {
		return err
	}
	defer k.Close()
	// Jupyter may interrupt with SIGINT (interrupt_mode "signal").
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		for range sig {
			k.Interrupt()
		}
	}()
	return k.Serve()
}
