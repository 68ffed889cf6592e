package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// client is a minimal Jupyter front end: shell, control and stdin DEALERs
// (shell and stdin with one identity, as Jupyter's clients do, so that an
// input_request reaches it), an iopub SUB.
type client struct {
	t                            *testing.T
	key                          []byte
	shell, control, stdin, iopub *sock
	session                      string
	cancel                       context.CancelFunc
}

// sock is a client socket whose messages one goroutine reads into msgs, so a
// receive that times out loses nothing.
type sock struct {
	zmq4.Socket
	msgs chan zmq4.Msg
}

func freePorts(t *testing.T, n int) []int {
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func startKernel(t *testing.T) (*Kernel, *client) {
	k, conn := newKernel(t)
	return k, dial(t, conn)
}

// newKernel starts a kernel serving until the test ends.
func newKernel(t *testing.T) (*Kernel, Connection) {
	p := freePorts(t, 5)
	conn := Connection{Transport: "tcp", IP: "127.0.0.1", ShellPort: p[0], IOPubPort: p[1], StdinPort: p[2],
		ControlPort: p[3], HBPort: p[4], Key: "secret", SignatureScheme: "hmac-sha256"}
	ctx, cancel := context.WithCancel(context.Background())
	k, err := New(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { k.Serve(); close(served) }()
	t.Cleanup(func() {
		k.Close()
		cancel()
		<-served
	})
	return k, conn
}

// dial connects a new front end to the kernel at conn.
func dial(t *testing.T, conn Connection) *client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{t: t, key: []byte(conn.Key), session: newID(), cancel: cancel}
	id := zmq4.WithID(zmq4.SocketIdentity(c.session))
	newSock := func(s zmq4.Socket, port int) *sock {
		if err := s.Dial(conn.endpoint(port)); err != nil {
			t.Fatal(err)
		}
		x := &sock{Socket: s, msgs: make(chan zmq4.Msg, 1024)}
		go func() {
			for {
				m, err := s.Recv()
				if err != nil {
					close(x.msgs)
					return
				}
				x.msgs <- m
			}
		}()
		return x
	}
	c.shell = newSock(zmq4.NewDealer(ctx, id), conn.ShellPort)
	c.control = newSock(zmq4.NewDealer(ctx), conn.ControlPort)
	c.stdin = newSock(zmq4.NewDealer(ctx, id), conn.StdinPort)
	sub := zmq4.NewSub(ctx)
	sub.SetOption(zmq4.OptionSubscribe, "")
	c.iopub = newSock(sub, conn.IOPubPort)
	t.Cleanup(c.close)
	// Wait for the SUB to be connected: kernel_info until iopub answers.
	for i := 0; ; i++ {
		c.request(c.shell, "kernel_info_request", map[string]any{})
		if _, err := c.recvTimeout(c.shell, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if m, err := c.recvTimeout(c.iopub, 200*time.Millisecond); err == nil && m.Header.MsgType == "status" {
			c.drainIOPub(200 * time.Millisecond)
			break
		}
		if i == 20 {
			t.Fatal("iopub never connected")
		}
	}
	return c
}

// close closes the client's sockets, as a front end that goes away does.
func (c *client) close() {
	for _, s := range []*sock{c.shell, c.control, c.stdin, c.iopub} {
		s.Close()
	}
	c.cancel()
}

func (c *client) request(s *sock, msgType string, content any) string {
	b, _ := json.Marshal(content)
	m := &Message{Header: newHeader(c.session, msgType), Parent: json.RawMessage("{}"), Content: b}
	frames, err := encode(c.key, m)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := s.Send(frames); err != nil {
		c.t.Fatal(err)
	}
	return m.Header.MsgID
}

func (c *client) recvTimeout(s *sock, d time.Duration) (*Message, error) {
	select {
	case m, ok := <-s.msgs:
		if !ok {
			return nil, fmt.Errorf("socket closed")
		}
		return decode(c.key, m.Frames)
	case <-time.After(d):
		return nil, fmt.Errorf("no message in %v", d)
	}
}

func (c *client) drainIOPub(d time.Duration) {
	for {
		if _, err := c.recvTimeout(c.iopub, d); err != nil {
			return
		}
	}
}

// execute runs code and returns the reply and the iopub messages up to idle.
func (c *client) execute(code string) (reply map[string]any, outputs []*Message) {
	return c.wait(c.send(code, false))
}

// send sends an execute_request and returns its id.
func (c *client) send(code string, allowStdin bool) string {
	return c.request(c.shell, "execute_request", map[string]any{"code": code, "silent": false, "store_history": true,
		"user_expressions": map[string]any{}, "allow_stdin": allowStdin, "stop_on_error": true})
}

// wait returns the reply to execute_request id and its iopub messages up to idle.
func (c *client) wait(id string) (reply map[string]any, outputs []*Message) {
	m, err := c.recvTimeout(c.shell, 60*time.Second)
	if err != nil {
		c.t.Fatalf("execute: %v", err)
	}
	json.Unmarshal(m.Content, &reply)
	for {
		o, err := c.recvTimeout(c.iopub, 10*time.Second)
		if err != nil {
			c.t.Fatalf("execute: iopub: %v", err)
		}
		var parent Header
		json.Unmarshal(o.Parent, &parent)
		if parent.MsgID != id {
			continue
		}
		if o.Header.MsgType == "status" && strings.Contains(string(o.Content), "idle") {
			return reply, outputs
		}
		outputs = append(outputs, o)
	}
}

// streamText joins the text of the stream messages named name.
func streamText(outputs []*Message, name string) string {
	var b strings.Builder
	for _, o := range outputs {
		if o.Header.MsgType == "stream" {
			var s struct{ Name, Text string }
			json.Unmarshal(o.Content, &s)
			if s.Name == name {
				b.WriteString(s.Text)
			}
		}
	}
	return b.String()
}

// result is the text/plain of a cell's execute_result, "" when none.
func result(outputs []*Message) string {
	if r := find(outputs, "execute_result"); r != nil {
		return r["data"].(map[string]any)["text/plain"].(string)
	}
	return ""
}

func find(outputs []*Message, msgType string) map[string]any {
	for _, o := range outputs {
		if o.Header.MsgType == msgType {
			var m map[string]any
			json.Unmarshal(o.Content, &m)
			return m
		}
	}
	return nil
}

func TestExecuteKeepsState(t *testing.T) {
	_, c := startKernel(t)
	c.execute(`x := 20`)
	reply, out := c.execute(`fmt.Println("hi"); x + 22`)
	if reply["status"] != "ok" {
		t.Fatalf("reply %v", reply)
	}
	if s := find(out, "stream"); s == nil || s["text"] != "hi\n" {
		t.Errorf("stream = %v", s)
	}
	r := find(out, "execute_result")
	if r == nil || r["data"].(map[string]any)["text/plain"] != "42" {
		t.Errorf("execute_result = %v", r)
	}
	_, out = c.execute(`display.Plot("loss", []float64{3, 2, 1.5, 1.2})`)
	d := find(out, "display_data")
	if d == nil || d["data"].(map[string]any)["image/png"] == nil {
		t.Errorf("display_data without image/png: %v", d)
	}
}

// TestLiveDisplay: a LivePlot's first draw is a display_data with a
// display_id and its later draws are update_display_data of that id, which
// Jupyter front ends redraw in place.
func TestLiveDisplay(t *testing.T) {
	_, c := startKernel(t)
	_, out := c.execute(`p := display.NewLivePlot("loss")
p.Every = 0
for i := 1; i <= 3; i++ {
	p.Add(1 / float64(i))
}`)
	var ids []string
	var kinds []string
	for _, o := range out {
		if k := o.Header.MsgType; k == "display_data" || k == "update_display_data" {
			var m struct {
				Data      map[string]any
				Transient map[string]string
			}
			json.Unmarshal(o.Content, &m)
			if m.Data["image/png"] == nil {
				t.Errorf("%s without image/png", k)
			}
			kinds = append(kinds, k)
			ids = append(ids, m.Transient["display_id"])
		}
	}
	if strings.Join(kinds, " ") != "display_data update_display_data update_display_data" {
		t.Fatalf("messages %v; want one display_data and two update_display_data", kinds)
	}
	if ids[0] == "" || ids[1] != ids[0] || ids[2] != ids[0] {
		t.Errorf("display ids %q: want one id, repeated", ids)
	}
}

// TestInterruptInfiniteLoop interrupts a cell spinning forever over the
// control channel, then runs another cell in the same kernel.
func TestInterruptInfiniteLoop(t *testing.T) {
	_, c := startKernel(t)
	c.execute(`n := 41`)
	done := make(chan map[string]any, 1)
	go func() {
		reply, _ := c.execute(`for { n = n + 0 }`)
		done <- reply
	}()
	time.Sleep(500 * time.Millisecond)
	c.request(c.control, "interrupt_request", map[string]any{})
	if m, err := c.recvTimeout(c.control, 5*time.Second); err != nil || m.Header.MsgType != "interrupt_reply" {
		t.Fatalf("interrupt_reply: %v %v", m, err)
	}
	select {
	case reply := <-done:
		if reply["status"] != "error" || reply["ename"] != "Interrupted" {
			t.Fatalf("interrupted cell replied %v", reply)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop was not interrupted")
	}
	reply, out := c.execute(`n + 1`)
	if reply["status"] != "ok" || find(out, "execute_result")["data"].(map[string]any)["text/plain"] != "42" {
		t.Fatalf("after the interrupt: %v %v", reply, out)
	}
}

// TestSurvivesBadCells: syntax errors, panics, nil dereferences and a flood
// of output are reported (the 100-execution leak check is TestNoLeaks).
func TestSurvivesBadCells(t *testing.T) {
	_, c := startKernel(t)
	for _, bad := range []struct{ code, ename string }{
		{`x := := 1`, "SyntaxError"},
		{`panic("boom")`, "panic"},
		{`var p *tensor.Tensor; p.Shape()`, "panic"},
		{`undefinedName + 1`, "error"},
	} {
		reply, out := c.execute(bad.code)
		if reply["status"] != "error" || reply["ename"] != bad.ename || find(out, "error") == nil {
			t.Errorf("%q: reply %v", bad.code, reply)
		}
	}
	_, out := c.execute(`for i := 0; i < 100000; i++ { fmt.Println("a line of output that is long enough to add up quickly") }`)
	if n := len(streamText(out, "stdout")); n > maxStream+(1<<10) {
		t.Errorf("sent %d bytes of stream output, want ≤ about %d", n, maxStream)
	}
	if reply, out := c.execute(`1 + 1`); reply["status"] != "ok" || result(out) != "2" {
		t.Errorf("after the flood: %v %v", reply, out)
	}
}

func TestCompleteInspectIsComplete(t *testing.T) {
	_, c := startKernel(t)
	c.execute(`model := 1`)
	c.request(c.shell, "complete_request", map[string]any{"code": "tensor.MatM", "cursor_pos": 11})
	m, err := c.recvTimeout(c.shell, 5*time.Second)
	if err != nil || !strings.Contains(string(m.Content), "tensor.MatMul") {
		t.Errorf("complete: %v %v", m, err)
	}
	c.request(c.shell, "complete_request", map[string]any{"code": "mod", "cursor_pos": 3})
	if m, err = c.recvTimeout(c.shell, 5*time.Second); err != nil || !strings.Contains(string(m.Content), `"model"`) {
		t.Errorf("complete a variable: %v %v", m, err)
	}
	c.request(c.shell, "inspect_request", map[string]any{"code": "toy.Load(p)", "cursor_pos": 6, "detail_level": 0})
	if m, err = c.recvTimeout(c.shell, 5*time.Second); err != nil || !strings.Contains(string(m.Content), "GGUF") {
		t.Errorf("inspect: %v %v", m, err)
	}
	for code, want := range map[string]string{"func f() {": "incomplete", "x := 1": "complete", "x := )": "invalid"} {
		c.request(c.shell, "is_complete_request", map[string]any{"code": code})
		m, err := c.recvTimeout(c.shell, 5*time.Second)
		if err != nil || !strings.Contains(string(m.Content), `"`+want+`"`) {
			t.Errorf("is_complete %q: %v %v, want %s", code, m, err, want)
		}
	}
}

// TestNativeCallError: a native call failing with a NativeCallError shows as
// that named error in the kernel, and the pure-Go path still answers. (toysh's
// test makes the library really unloadable, in a process of its own.)
func TestNativeCallError(t *testing.T) {
	_, c := startKernel(t)
	reply, _ := c.execute(`panic(&toy.NativeCallError{Backend: "native", Missing: "libtoy.so", Hint: "use TOY_BACKEND=go"})`)
	if reply["ename"] != "NativeCallError" || !strings.Contains(reply["evalue"].(string), "TOY_BACKEND=go") {
		t.Errorf("panic(NativeCallError): %v", reply)
	}
	_, out := c.execute(`tensor.MatMul(tensor.FromFloat32([]float32{1, 2}, 1, 2), tensor.FromFloat32([]float32{3, 4}, 1, 2))`)
	if r := find(out, "execute_result"); r == nil || r["data"].(map[string]any)["text/plain"] != "Tensor[1 1] F32 [11]" {
		t.Errorf("pure-Go MatMul: %v", r)
	}
}
