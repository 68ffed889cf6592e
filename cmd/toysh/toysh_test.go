package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/toyml/toy/kernelspec"
)

var toysh string // the binary under test, built by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toysh-test")
	if err != nil {
		panic(err)
	}
	toysh = filepath.Join(dir, "toysh")
	if out, err := exec.Command("go", "build", "-o", toysh, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestPipedScriptAndExpr(t *testing.T) {
	cmd := exec.Command(toysh)
	cmd.Stdin = strings.NewReader("func sq(x int) int {\n\treturn x * x\n}\nsq(7)\npanic(\"boom\")\nsq(3)\n:doc toy.Load\n")
	out, _ := cmd.CombinedOutput()
	s := string(out)
	for _, want := range []string{"49\n", "panic: boom", "9\n", "func Load(path string)"} {
		if !strings.Contains(s, want) {
			t.Errorf("piped REPL output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "\x1b[") {
		t.Errorf("escape codes in piped output: %q", s)
	}
	out, err := exec.Command(toysh, "-e", `tensor.FromFloat32([]float32{1, 2}, 2)`).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Tensor[2] F32 [1 2]") {
		t.Errorf("toysh -e: %v %s", err, out)
	}
}

// TestScriptArgs: toysh FILE.go ARGS… gives the script os.Args as go run
// gives a program (the script's path, then ARGS), flags after FILE.go
// included.
func TestScriptArgs(t *testing.T) {
	script := filepath.Join(t.TempDir(), "args.go")
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { fmt.Printf(\"%q\\n\", os.Args[1:]) }\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(toysh, script, "a", "-n", "b c").CombinedOutput()
	if err != nil || string(out) != "[\"a\" \"-n\" \"b c\"]\n" {
		t.Errorf("toysh %s a -n 'b c': %v %s", script, err, out)
	}
}

// TestHelp: toysh -help lists toysh's own flag and forms, and exits 0; the
// flags toy's imports register on flag.CommandLine (testing/quick's
// -quickchecks) are not toysh's.
func TestHelp(t *testing.T) {
	out, err := exec.Command(toysh, "-help").CombinedOutput()
	s := string(out)
	if err != nil || !strings.Contains(s, "-e code") || !strings.Contains(s, "toysh install-kernel") || strings.Contains(s, "quickchecks") {
		t.Errorf("toysh -help: %v\n%s", err, s)
	}
}

// TestScriptErrors: a script's errors name the file, line and column, and
// an index out of range says so at its line.
func TestScriptErrors(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]string{
		"package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1 + nope)\n}\n":   "bad.go:6:18: undefined: nope\n",
		"package main\n\nvar s = []int{1, 2}\n\nfunc main() {\n\ti := 5\n\t_ = s[i]\n}\n": "panic: runtime error: index out of range [bad.go:7:6, in main.main(...)]\n",
	} {
		script := filepath.Join(dir, "bad.go")
		if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(toysh, "bad.go")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if string(out) != want || err == nil {
			t.Errorf("toysh bad.go: %v %q, want %q", err, out, want)
		}
	}
}

// TestREPLTerminal drives the REPL through a pty: a function over several
// lines, a panic, a line that works after it, history recall, and Ctrl-C
// interrupting an endless loop.
func TestREPLTerminal(t *testing.T) {
	cmd := exec.Command(toysh)
	cmd.Env = append(os.Environ(), "TOYSH_HISTORY="+filepath.Join(t.TempDir(), "history"), "TERM=xterm")
	f, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var buf bytes.Buffer
	got := make(chan struct{}, 100)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			if n > 0 {
				buf.Write(b[:n])
				got <- struct{}{}
			}
			if err != nil {
				return
			}
		}
	}()
	var seen string
	wait := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !strings.Contains(strings.ReplaceAll(buf.String()[len(seen):], "\r", ""), want) {
			select {
			case <-got:
			case <-deadline:
				t.Fatalf("no %q in REPL output:\n%q", want, buf.String())
			}
		}
		seen = buf.String()
	}
	wait("toy> ")
	for _, line := range []string{"func add(a, b int) int {", "\treturn a + b", "}"} {
		io.WriteString(f, line+"\r")
		time.Sleep(100 * time.Millisecond)
	}
	wait("toy> ")
	io.WriteString(f, "add(40, 2)\r")
	wait("42")
	io.WriteString(f, "panic(\"boom\")\r")
	wait("panic: boom")
	io.WriteString(f, "add(1, 1)\r")
	wait("2\n")
	io.WriteString(f, "\x1b[A\x1b[A\r") // history: up past add(1, 1) to the panic
	wait("panic: boom")
	io.WriteString(f, "for {}\r")
	time.Sleep(500 * time.Millisecond)
	io.WriteString(f, "\x03") // Ctrl-C interrupts the loop, not the shell
	wait("Interrupted")
	io.WriteString(f, "add(2, 3)\r")
	wait("5\n")
	io.WriteString(f, "\x04")
}

// TestNotebooks executes every notebook with Jupyter's nbconvert against the
// toy kernel and checks the outputs.
func TestNotebooks(t *testing.T) {
	jupyter, err := exec.LookPath("jupyter")
	if err != nil {
		t.Skip("jupyter is not installed (.ci/install.d/jupyter.sh installs it)")
	}
	if err := exec.Command(jupyter, "nbconvert", "--version").Run(); err != nil {
		t.Skip("jupyter nbconvert is not installed (.ci/install.d/jupyter.sh installs it)")
	}
	jpath := t.TempDir()
	if err := kernelspec.Write(filepath.Join(jpath, "kernels", "toy"), toysh); err != nil {
		t.Fatal(err)
	}
	nbs, _ := filepath.Glob("../../notebooks/*.ipynb")
	if len(nbs) == 0 {
		t.Fatal("no notebooks")
	}
	for _, nb := range nbs {
		t.Run(filepath.Base(nb), func(t *testing.T) {
			t.Parallel() // each notebook has its own kernel process
			out := filepath.Join(t.TempDir(), "out.ipynb")
			cmd := exec.Command(jupyter, "nbconvert", "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=120",
				"--ExecutePreprocessor.kernel_name=toy", "--output", out, filepath.Base(nb))
			cmd.Dir = filepath.Dir(nb)
			cmd.Env = append(os.Environ(), "JUPYTER_PATH="+jpath, "TOY_MODEL=") // the notebooks' own models: a fresh clone's
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: nbconvert: %v\n%s", nb, err, b)
			}
			checkNotebook(t, nb, out)
		})
	}
}

func checkNotebook(t *testing.T, name, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			CellType string `json:"cell_type"`
			Outputs  []struct {
				OutputType string                     `json:"output_type"`
				Data       map[string]json.RawMessage `json:"data"`
				Text       json.RawMessage            `json:"text"`
				Ename      string                     `json:"ename"`
				Evalue     string                     `json:"evalue"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	pngs := 0
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			if o.OutputType == "error" {
				t.Errorf("%s: error output %s: %s", name, o.Ename, o.Evalue)
			}
			if _, ok := o.Data["image/png"]; ok {
				pngs++
			}
			text.Write(o.Text)
			text.Write(o.Data["text/plain"])
		}
	}
	if pngs == 0 {
		t.Errorf("%s: no image/png output", name)
	}
	s := text.String()
	switch filepath.Base(name) {
	case "01-tour.ipynb":
		for _, want := range []string{"llama model toy-go", "VocabSize:2048", "Tensor[6 2048] F32", "Steps:", "Tensor[22 22] F32"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: outputs lack %q:\n%s", name, want, s)
			}
		}
	case "02-train.ipynb":
		// The loss must fall from about ln 2048 = 7.6 by more than 2 nats.
		var first, last float64
		var steps int
		i := strings.Index(s, "loss ")
		if i < 0 {
			t.Fatalf("%s: no loss line:\n%s", name, s)
		}
		if _, err := fmt.Sscanf(s[i:], "loss %g -> %g in %d steps", &first, &last, &steps); err != nil {
			t.Fatalf("%s: loss line %.60q: %v", name, s[i:], err)
		}
		if first < 7 || first > 8.5 || last > first-2 || steps != 150 {
			t.Errorf("%s: loss %.2f -> %.2f in %d steps; want from about 7.6 down by more than 2 in 150", name, first, last, steps)
		}
	case "04-your-own-architecture.ipynb":
		var first, last float64
		i := strings.Index(s, "loss ")
		if i < 0 {
			t.Fatalf("%s: no loss line:\n%s", name, s)
		}
		if _, err := fmt.Sscanf(s[i:], "loss %g -> %g", &first, &last); err != nil || last > first-1.5 {
			t.Errorf("%s: loss %.2f -> %.2f (%v); want it down by more than 1.5", name, first, last, err)
		}
		for _, want := range []string{"registered: layerscale", "layerscale model ", "generated: ", "12 adapter tensors saved", "[layerscale]", "blk.l.attn_gain.weight"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: outputs lack %q:\n%s", name, want, s)
			}
		}
	case "03-lora.ipynb":
		// s is the outputs' JSON: the generated text is quoted twice.
		if i := strings.Index(s, "after: "); i < 0 || !strings.HasPrefix(s[i:], `after: \" hello, notebook: the adapter learned this line.`) {
			t.Errorf("%s: the adapter did not teach the line:\n%s", name, s)
		}
	}
}

// TestNativeCallError: with the native kernel library unusable (no writable
// cache directory), toysh shows the named error and the pure-Go path answers.
func TestNativeCallError(t *testing.T) {
	cmd := exec.Command(toysh, "-e", `err := toy.UseBackend("native"); fmt.Println(err); fmt.Println(toy.BackendName()); tensor.MatMul(tensor.FromFloat32([]float32{1, 2}, 1, 2), tensor.FromFloat32([]float32{3, 4}, 1, 2))`)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME=/dev/null/toy", "TOY_BACKEND=")
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil || !strings.Contains(s, "native backend: missing") || !strings.Contains(s, "Tensor[1 1] F32 [11]") {
		t.Errorf("toysh: %v\n%s", err, s)
	}
	out, _ = exec.Command(toysh, "-e", `panic(&toy.NativeCallError{Backend: "native", Missing: "libtoy.so"})`).CombinedOutput()
	if !strings.Contains(string(out), "NativeCallError: native backend: missing libtoy.so") {
		t.Errorf("a panicking native call: %s", out)
	}
}

// TestREPLInterruptsGenerate: Ctrl-C (SIGINT, what a terminal sends) stops a
// line inside a long compiled call — the default model generating 20,000
// tokens — the shell lives on, and the generation really stopped: the
// process uses next to no CPU in the second after.
func TestREPLInterruptsGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the default model")
	}
	cmd := exec.Command(toysh)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	wait := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in REPL output:\n%s", want, out.String())
			}
		}
	}
	io.WriteString(stdin, `import "github.com/toyml/toy/toy/models/llama"
m, err := toy.LoadDefault()
m.Net.(*llama.Model).Context = 1 << 15
ids, err := m.Encode("package main")
fmt.Println("loaded")
`)
	wait("loaded")
	io.WriteString(stdin, "out, err := m.Generate(ids, toy.GenerateOptions{MaxTokens: 20000})\n")
	time.Sleep(1500 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	wait("Interrupted")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the line stopped %v after Ctrl-C", d)
	}
	time.Sleep(100 * time.Millisecond) // the token being decoded ends
	if c0, ok := procCPU(cmd.Process.Pid); ok {
		time.Sleep(time.Second)
		if c1, _ := procCPU(cmd.Process.Pid); c1-c0 > 300*time.Millisecond {
			t.Errorf("%v of CPU time in the second after Ctrl-C: the generation goes on", c1-c0)
		}
	}
	io.WriteString(stdin, "fmt.Println(\"still\", len(ids) > 0)\n")
	wait("still true")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("toysh exited with %v:\n%s", err, out.String())
	}
}

// procCPU reads a process's CPU time (user + system) from /proc; false
// where there is none.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])) // fields from the 3rd on
	if len(f) < 13 {
		return 0, false
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond, true // USER_HZ is 100 on Linux
}

// syncBuffer is a bytes.Buffer safe to write from a process's pipes while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestKilledFrontEnd: a real Jupyter client (jupyter_client in Debian's
// python3) starts a long cell and is killed with SIGKILL while it runs; the
// kernel process lives on, and a second client connecting to the same kernel
// runs a cell and gets its result.
func TestKilledFrontEnd(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import jupyter_client").Run(); err != nil {
		t.Skip("Debian's python3 has no jupyter_client (.ci/install.d/jupyter.sh installs it)")
	}
	var ports []int
	for len(ports) < 5 { // free ports: listen, note, close
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	conn := filepath.Join(t.TempDir(), "kernel.json")
	b, _ := json.Marshal(map[string]any{"transport": "tcp", "ip": "127.0.0.1", "shell_port": ports[0],
		"iopub_port": ports[1], "stdin_port": ports[2], "control_port": ports[3], "hb_port": ports[4],
		"key": "a-secret", "signature_scheme": "hmac-sha256"})
	if err := os.WriteFile(conn, b, 0o600); err != nil {
		t.Fatal(err)
	}
	kernel := exec.Command(toysh, "kernel", conn)
	var klog syncBuffer
	kernel.Stdout, kernel.Stderr = &klog, &klog
	if err := kernel.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- kernel.Wait() }()
	defer func() {
		kernel.Process.Kill()
		<-exited
	}()

	// Client A: send the long cell, then die without a word.
	a := exec.Command(python, "testdata/client.py", conn, "start")
	out, err := a.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.Stderr = os.Stderr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 5)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "sent\n" {
		a.Process.Kill()
		a.Wait()
		t.Fatalf("client A: %q, %v; kernel:\n%s", line, err, klog.String())
	}
	time.Sleep(300 * time.Millisecond) // the cell is running
	a.Process.Kill()
	a.Wait()

	// Client B: a new front end on the same kernel.
	cmd := exec.Command(python, "testdata/client.py", conn, "run")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client B: %v\n%s\nkernel:\n%s", err, got, klog.String())
	}
	if !strings.Contains(string(got), "status ok") || !strings.Contains(string(got), "result 42") {
		t.Errorf("client B after A was killed: %s", got)
	}
	select {
	case err := <-exited:
		t.Fatalf("the kernel exited: %v\n%s", err, klog.String())
	default:
	}
}
