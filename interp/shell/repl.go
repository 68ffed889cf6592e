// The REPL: line editing and history on a terminal, plain lines from a pipe.

package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/chzyer/readline"

	"github.com/toyml/toy/interp"
	"github.com/toyml/toy/toy/display"
)

const help = `Go statements, expressions and declarations; toy's packages are imported:
  m, err := toy.Load("model.gguf")
Input continues on "..." lines while a statement is open.
  :help          this text
  :load FILE     evaluate a Go file
  :reset         forget everything defined so far
  :time          toggle timing of each evaluation
  :doc NAME      documentation of NAME (toy.Load, tensor.Tensor, m.Generate …)
  :quit          leave (or Ctrl-D)
Ctrl-C interrupts a running evaluation, or clears the line being typed.`

// display prints a bundle's text; an image goes to a temporary file whose
// path is printed. A live display (one with an ID) keeps one file that each
// update rewrites, so an image viewer showing it follows along.
func (sh *shell) display(b display.Bundle) {
	if len(b.PNG) > 0 {
		if path, ok := sh.live[b.ID]; ok && b.ID != "" {
			if err := os.WriteFile(path, b.PNG, 0o644); err == nil {
				fmt.Fprintf(sh.stdout, "%s: %s\n", b.Text, path)
				return
			}
		}
		f, err := os.CreateTemp("", "toy-display-*.png")
		if err == nil {
			f.Write(b.PNG)
			f.Close()
			if b.ID != "" {
				if sh.live == nil {
					sh.live = map[string]string{}
				}
				sh.live[b.ID] = f.Name()
			}
			fmt.Fprintf(sh.stdout, "%s: %s\n", b.Text, f.Name())
			return
		}
	}
	fmt.Fprintln(sh.stdout, b.Text)
}

// lineReader is what the REPL reads lines from.
type lineReader interface {
	readLine(prompt string) (string, error) // io.EOF at the end, readline.ErrInterrupt on Ctrl-C
	close()
}

type plainReader struct{ s *bufio.Scanner }

func (r *plainReader) readLine(string) (string, error) {
	if !r.s.Scan() {
		if err := r.s.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return r.s.Text(), nil
}
func (r *plainReader) close() {}

type editReader struct{ rl *readline.Instance }

func (r *editReader) readLine(prompt string) (string, error) {
	r.rl.SetPrompt(prompt)
	return r.rl.Readline()
}
func (r *editReader) close() { r.rl.Close() }

// newReader edits lines on a terminal and reads plain lines otherwise.
func (sh *shell) newReader() lineReader {
	if sh.stdin != os.Stdin || !readline.DefaultIsTerminal() {
		s := bufio.NewScanner(sh.stdin)
		s.Buffer(make([]byte, 1<<20), 16<<20)
		return &plainReader{s}
	}
	hist := ""
	if d, err := os.UserCacheDir(); err == nil {
		os.MkdirAll(filepath.Join(d, "toy"), 0o755)
		hist = filepath.Join(d, "toy", "toysh_history")
	}
	if h := os.Getenv("TOYSH_HISTORY"); h != "" {
		hist = h
	}
	rl, err := readline.NewEx(&readline.Config{Prompt: "toy> ", HistoryFile: hist, InterruptPrompt: "^C", EOFPrompt: ""})
	if err != nil {
		s := bufio.NewScanner(sh.stdin)
		return &plainReader{s}
	}
	return &editReader{rl}
}

func (sh *shell) repl() error {
	in, err := sh.interp(nil)
	if err != nil {
		return err
	}
	r := sh.newReader()
	defer r.close()
	// Ctrl-C (SIGINT) is caught for the whole session: it interrupts the
	// evaluation running, toy's compiled calls included, and is ignored between
	// evaluations (on a terminal the line editor reads it as a key), so a
	// Ctrl-C pressed at the wrong moment never kills the shell.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	_, tty := r.(*editReader)
	if tty {
		fmt.Fprintln(sh.stdout, "toysh — Go with toy preloaded. :help for help, Ctrl-D to leave.")
	}
	timing := false
	var buf strings.Builder
	for {
		prompt := "toy> "
		if buf.Len() > 0 {
			prompt = "...  "
		}
		line, err := r.readLine(prompt)
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			continue
		}
		if err == io.EOF {
			if buf.Len() > 0 {
				sh.evalPrint(in, buf.String(), timing, sigs)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if buf.Len() == 0 && strings.HasPrefix(strings.TrimSpace(line), ":") {
			cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
			arg = strings.TrimSpace(arg)
			switch cmd {
			case ":help", ":h":
				fmt.Fprintln(sh.stdout, help)
			case ":quit", ":q", ":exit":
				return nil
			case ":time":
				timing = !timing
				fmt.Fprintln(sh.stdout, "timing", map[bool]string{true: "on", false: "off"}[timing])
			case ":reset":
				n, err := sh.interp(nil)
				if err != nil {
					sh.report(err)
					continue
				}
				in = n
				fmt.Fprintln(sh.stdout, "reset")
			case ":load":
				b, err := os.ReadFile(arg)
				if err != nil {
					sh.report(err)
					continue
				}
				sh.evalPrint(in, string(b), timing, sigs)
			case ":doc":
				if d, ok := in.Doc(arg); ok {
					fmt.Fprintln(sh.stdout, d)
				} else {
					fmt.Fprintf(sh.stdout, "no documentation for %q\n", arg)
				}
			default:
				fmt.Fprintf(sh.stdout, "unknown command %s (:help lists them)\n", cmd)
			}
			continue
		}
		buf.WriteString(line)
		buf.WriteString("\n")
		switch interp.IsComplete(buf.String()) {
		case "incomplete":
			continue
		}
		sh.evalPrint(in, buf.String(), timing, sigs)
		buf.Reset()
	}
}

// evalPrint evaluates code, interrupted by a signal on sigs, and prints its
// value or error.
func (sh *shell) evalPrint(in *interp.Interp, code string, timing bool, sigs chan os.Signal) {
	select {
	case <-sigs: // a Ctrl-C from before this evaluation
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	start := time.Now()
	res, err := in.Eval(ctx, code)
	if err != nil {
		sh.report(err)
	} else if b, ok := res.Bundle(); ok {
		fmt.Fprintln(sh.stdout, b.Text)
	}
	if timing {
		fmt.Fprintf(sh.stdout, "(%v)\n", time.Since(start).Round(time.Microsecond))
	}
}
