package kernel

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStdin: a cell reading standard input sends an input_request on the
// stdin channel and reads the front end's input_reply; with allow_stdin
// false the read fails with ErrNoStdin, noted on stderr; an interrupt ends
// a wait for input.
func TestStdin(t *testing.T) {
	_, c := startKernel(t)
	id := c.send("import \"bufio\"\nr := bufio.NewReader(os.Stdin)\nfmt.Print(\"name? \")\nline, err := r.ReadString('\\n')\nline", true)
	m, err := c.recvTimeout(c.stdin, 10*time.Second)
	if err != nil || m.Header.MsgType != "input_request" {
		t.Fatalf("no input_request on stdin: %v %v", m, err)
	}
	var parent Header
	json.Unmarshal(m.Parent, &parent)
	if parent.MsgID != id {
		t.Errorf("input_request's parent is %q, want the execute_request %q", parent.MsgID, id)
	}
	c.request(c.stdin, "input_reply", map[string]any{"value": "gopher"})
	reply, out := c.wait(id)
	if reply["status"] != "ok" || result(out) != `"gopher\n"` || streamText(out, "stdout") != "name? " {
		t.Errorf("cell reading a line: %v, result %q, stdout %q", reply, result(out), streamText(out, "stdout"))
	}

	// fmt.Scanln reads os.Stdin too; the front end does not allow input.
	reply, out = c.execute(`var s string; _, err = fmt.Scanln(&s); err`)
	if reply["status"] != "ok" || !strings.Contains(result(out), "allow_stdin is false") ||
		!strings.Contains(streamText(out, "stderr"), "does not accept input") {
		t.Errorf("Scanln without allow_stdin: %v, result %q, stderr %q", reply, result(out), streamText(out, "stderr"))
	}
	if _, err := c.recvTimeout(c.stdin, 100*time.Millisecond); err == nil {
		t.Error("an input_request was sent though allow_stdin was false")
	}

	// Interrupting a cell that waits for input.
	id = c.send(`fmt.Scanln(&s)`, true)
	if m, err := c.recvTimeout(c.stdin, 10*time.Second); err != nil || m.Header.MsgType != "input_request" {
		t.Fatalf("no input_request: %v %v", m, err)
	}
	c.request(c.control, "interrupt_request", map[string]any{})
	c.recvTimeout(c.control, 5*time.Second)
	if reply, _ := c.wait(id); reply["status"] != "error" || reply["ename"] != "Interrupted" {
		t.Errorf("interrupted wait for input: %v", reply)
	}
}

// TestClosedFrontEnd: the front end goes away while a cell runs (its sockets
// close, as when its process dies); the cell finishes, and a new front end
// connecting to the same kernel runs cells in the same state and gets
// heartbeats.
func TestClosedFrontEnd(t *testing.T) {
	_, conn := newKernel(t)
	a := dial(t, conn)
	a.execute(`done := false`)
	a.send(`for i := 0; i < 20; i++ { fmt.Println(i); time.Sleep(100 * time.Millisecond) }; done = true`, false)
	for {
		m, err := a.recvTimeout(a.iopub, 10*time.Second)
		if err != nil {
			t.Fatal("the cell printed nothing")
		}
		if m.Header.MsgType == "stream" {
			break
		}
	}
	a.close()

	b := dial(t, conn)
	reply, out := b.execute(`done`)
	if reply["status"] != "ok" || result(out) != "true" {
		t.Fatalf("a new front end: %v %q", reply, result(out))
	}
	if reply, out := b.execute(`x := 41; x + 1`); reply["status"] != "ok" || result(out) != "42" {
		t.Errorf("a new front end: %v %q", reply, result(out))
	}
}

// openFDs counts this process's open file descriptors (-1 where /proc is
// absent).
func openFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}

// TestNoLeaks runs 100 cells — good ones, syntax errors, runtime panics,
// floods of several megabytes of output, reads of standard input not allowed
// — and checks that goroutines and file descriptors come back to where they
// were (slack: 3 goroutines, for timers and the runtime; 2 descriptors), that
// floods arrive in stream messages of at most streamChunk bytes, and that
// state survives.
func TestNoLeaks(t *testing.T) {
	_, c := startKernel(t)
	c.execute(`k := 0`)
	c.execute(`big := strings.Repeat("x", 6<<20)`)
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	goroutines, fds := runtime.NumGoroutine(), openFDs()
	floods := 0
	for i := 0; i < 100; i++ {
		code, status := `k++; k`, "ok"
		switch i % 10 {
		case 1:
			code, status = `var p *tensor.Tensor; p.Shape()`, "error"
		case 2:
			code, status = `k +`, "error"
		case 3:
			code, status = `panic("again")`, "error"
		case 4:
			code = `var s string; fmt.Scanln(&s)`
		case 5:
			if i%20 == 5 {
				code = `fmt.Print(big)` // one write of 6 MiB
			} else {
				code = `for j := 0; j < 100000; j++ { fmt.Println("a line of output, long enough to add up quickly", j) }`
			}
		}
		reply, out := c.execute(code)
		if reply["status"] != status {
			t.Fatalf("cell %d %q: %v", i, code, reply)
		}
		if i%10 != 5 {
			continue
		}
		floods++
		n := 0
		for _, o := range out {
			if o.Header.MsgType == "stream" {
				var s struct{ Text string }
				json.Unmarshal(o.Content, &s)
				if len(s.Text) > streamChunk+100 {
					t.Fatalf("cell %d: a stream message of %d bytes", i, len(s.Text))
				}
				n++
			}
		}
		text := streamText(out, "stdout")
		if len(text) > maxStream+100 || !strings.HasSuffix(text, "[output truncated after 4 MiB]\n") {
			t.Errorf("cell %d: %d bytes of output ending %q", i, len(text), text[max(0, len(text)-40):])
		}
		if n > 2*maxStream/streamChunk {
			t.Errorf("cell %d: %d stream messages for %d bytes", i, n, len(text))
		}
	}
	if reply, out := c.execute(`k`); reply["status"] != "ok" || result(out) != "50" {
		t.Errorf("k after 100 executions: %v %q", reply, result(out))
	}
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	if g := runtime.NumGoroutine(); g > goroutines+3 {
		t.Errorf("goroutines: %d before 100 executions, %d after", goroutines, g)
	}
	if f := openFDs(); f > fds+2 {
		t.Errorf("open file descriptors: %d before 100 executions, %d after", fds, f)
	}
	t.Logf("%d floods; goroutines %d → %d; fds %d → %d", floods, goroutines, runtime.NumGoroutine(), fds, openFDs())
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestInterruptGenerate interrupts a cell inside a long compiled call — the
// default model generating 20,000 tokens (its context stretched so it can) —
// and checks that the cell stops within seconds, that the generation really
// stopped (the process goes idle rather than decoding on in the background),
// and that the next cell runs.
func TestInterruptGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the default model")
	}
	_, c := startKernel(t)
	reply, _ := c.execute("import \"github.com/toyml/toy/toy/models/llama\"\n" +
		"m, err := toy.LoadDefault()\n" +
		"m.Net.(*llama.Model).Context = 1 << 15\n" +
		"ids, err := m.Encode(\"package main\")")
	if reply["status"] != "ok" {
		t.Fatalf("loading the default model: %v", reply)
	}
	id := c.send(`out, err := m.Generate(ids, toy.GenerateOptions{MaxTokens: 20000})`, false)
	time.Sleep(1500 * time.Millisecond)
	start := time.Now()
	c.request(c.control, "interrupt_request", map[string]any{})
	reply, _ = c.wait(id)
	if reply["status"] != "error" || reply["ename"] != "Interrupted" {
		t.Fatalf("interrupted Generate replied %v", reply)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the cell stopped %v after the interrupt", d)
	}
	time.Sleep(100 * time.Millisecond) // the token being decoded ends
	cpu := cpuTime()
	time.Sleep(time.Second)
	if busy := cpuTime() - cpu; busy > 300*time.Millisecond {
		t.Errorf("%v of CPU time in the second after the interrupt: the generation goes on", busy)
	}
	if reply, out := c.execute(`len(ids) > 0`); reply["status"] != "ok" || result(out) != "true" {
		t.Errorf("after the interrupt: %v %q", reply, result(out))
	}
}
