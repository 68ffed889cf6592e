// Command toysh is toy's interactive shell: a Go REPL (yaegi) with toy's
// packages preloaded, a script runner, and a Jupyter kernel.
//
//	toysh                     the REPL (line editing and history on a terminal)
//	toysh FILE.go [ARGS…]     run a script; os.Args is FILE.go and ARGS
//	toysh -e 'EXPR'           evaluate one cell and print its value
//	toysh kernel CONN.json    serve Jupyter (started by Jupyter, see install-kernel)
//	toysh install-kernel      register the kernel in the user's Jupyter data directory
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/toyml/toy/interp"
	"github.com/toyml/toy/interp/kernel"
)

func main() {
	expr := flag.String("e", "", "evaluate `code` and print its value")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: toysh [-e code] [FILE.go [ARGS...]] | toysh kernel CONNECTION_FILE | toysh install-kernel")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	var err error
	switch {
	case *expr != "":
		err = evalOnce(*expr)
	case len(args) >= 1 && args[0] == "kernel":
		if len(args) != 2 {
			flag.Usage()
			os.Exit(2)
		}
		err = runKernel(args[1])
	case len(args) >= 1 && args[0] == "install-kernel":
		err = installKernel()
	case len(args) >= 1 && (len(args) == 1 || strings.HasSuffix(args[0], ".go")):
		err = runScript(args[0], args[1:])
	case len(args) == 0:
		err = repl()
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "toysh:", err)
		os.Exit(1)
	}
}

// report prints an evaluation error as its name and message.
func report(err error) {
	name, msg := interp.Describe(err)
	if name == "error" || name == "panic" || name == "SyntaxError" {
		fmt.Fprintln(os.Stderr, msg)
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n", name, msg)
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

func evalOnce(code string) error {
	in, err := interp.New(interp.Options{Display: replDisplay})
	if err != nil {
		return err
	}
	ctx, done := interruptible()
	defer done()
	res, err := in.Eval(ctx, code)
	if err != nil {
		report(err)
		os.Exit(1)
	}
	if b, ok := res.Bundle(); ok {
		fmt.Println(b.Text)
	}
	return nil
}

// runScript runs a Go file with args after its path in os.Args.
func runScript(path string, args []string) error {
	in, err := interp.New(interp.Options{Display: replDisplay, Args: append([]string{path}, args...)})
	if err != nil {
		return err
	}
	ctx, done := interruptible()
	defer done()
	if _, err := in.EvalFile(ctx, path); err != nil {
		report(err)
		os.Exit(1)
	}
	return nil
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
