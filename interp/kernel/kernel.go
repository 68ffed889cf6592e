// Package kernel is toy's Jupyter kernel: the messaging protocol (v5.3) over
// the pure-Go ZeroMQ of github.com/go-zeromq/zmq4, evaluating cells with
// package interp. State persists across cells; an interrupt_request (or
// SIGINT) cancels the running cell; a panic, a syntax error or an endless
// loop is reported and the kernel keeps serving.
//
//	toysh kernel CONNECTION_FILE
package kernel

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-zeromq/zmq4"

	"github.com/toyml/toy/interp"
	"github.com/toyml/toy/toy/display"
)

// Connection is a Jupyter connection file.
type Connection struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
}

// ReadConnection reads a connection file.
func ReadConnection(path string) (Connection, error) {
	var c Connection
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("kernel: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("kernel: connection file %s: %w", path, err)
	}
	if c.SignatureScheme != "" && c.SignatureScheme != "hmac-sha256" {
		return c, fmt.Errorf("kernel: signature scheme %q not supported (hmac-sha256 is)", c.SignatureScheme)
	}
	return c, nil
}

func (c Connection) endpoint(port int) string {
	t := c.Transport
	if t == "" {
		t = "tcp"
	}
	return fmt.Sprintf("%s://%s:%d", t, c.IP, port)
}

// maxStream bounds the stream output one cell sends; the rest is dropped
// with a note, so a runaway print loop cannot flood the front end.
const maxStream = 4 << 20

// Kernel serves one Jupyter session.
type Kernel struct {
	conn    Connection
	key     []byte
	session string

	shell, control, stdin, iopub, hb zmq4.Socket
	ctx                              context.Context
	stop                             context.CancelFunc

	iopubMu sync.Mutex
	mu      sync.Mutex // guards below
	in      *interp.Interp
	count   int
	parent  *Message           // the request being executed
	cancel  context.CancelFunc // cancels the running cell
	sent    int                // stream bytes sent for the running cell
	done    chan struct{}
	reqs    chan *Message
}

// New binds the sockets of conn and starts an interpreter.
func New(ctx context.Context, conn Connection) (*Kernel, error) {
	ctx, stop := context.WithCancel(ctx)
	k := &Kernel{conn: conn, key: []byte(conn.Key), session: newID(), ctx: ctx, stop: stop,
		done: make(chan struct{}), reqs: make(chan *Message, 16)}
	k.shell = zmq4.NewRouter(ctx, zmq4.WithID(zmq4.SocketIdentity("shell")))
	k.control = zmq4.NewRouter(ctx, zmq4.WithID(zmq4.SocketIdentity("control")))
	k.stdin = zmq4.NewRouter(ctx, zmq4.WithID(zmq4.SocketIdentity("stdin")))
	k.iopub = zmq4.NewPub(ctx)
	k.hb = zmq4.NewRep(ctx)
	for _, s := range []struct {
		sock zmq4.Socket
		port int
	}{{k.shell, conn.ShellPort}, {k.control, conn.ControlPort}, {k.stdin, conn.StdinPort}, {k.iopub, conn.IOPubPort}, {k.hb, conn.HBPort}} {
		if err := s.sock.Listen(conn.endpoint(s.port)); err != nil {
			k.Close()
			return nil, fmt.Errorf("kernel: listen on %s: %w", conn.endpoint(s.port), err)
		}
	}
	if err := k.reset(); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

func (k *Kernel) reset() error {
	in, err := interp.New(interp.Options{
		Stdin:   strings.NewReader(""),
		Stdout:  &stream{k: k, name: "stdout"},
		Stderr:  &stream{k: k, name: "stderr"},
		Display: k.publish,
	})
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.in = in
	k.mu.Unlock()
	return nil
}

// Close closes the sockets.
func (k *Kernel) Close() {
	k.stop()
	for _, s := range []zmq4.Socket{k.shell, k.control, k.stdin, k.iopub, k.hb} {
		if s != nil {
			s.Close()
		}
	}
}

// Done is closed when a shutdown_request has been answered.
func (k *Kernel) Done() <-chan struct{} { return k.done }

// Serve answers requests until a shutdown_request or ctx ends.
func (k *Kernel) Serve() error {
	go k.heartbeat()
	go k.recvLoop(k.control, true)
	go k.recvLoop(k.shell, false)
	k.status(nil, "starting")
	for {
		select {
		case <-k.ctx.Done():
			return nil
		case <-k.done:
			return nil
		case m := <-k.reqs:
			k.handle(k.shell, m)
		}
	}
}

func (k *Kernel) heartbeat() {
	for {
		m, err := k.hb.Recv()
		if err != nil {
			if k.ctx.Err() != nil {
				return
			}
			continue
		}
		k.hb.Send(m)
	}
}

// recvLoop reads a ROUTER socket: control requests are handled at once (so
// an interrupt reaches a running cell), shell requests queue for Serve.
func (k *Kernel) recvLoop(s zmq4.Socket, control bool) {
	for {
		raw, err := s.Recv()
		if err != nil {
			if k.ctx.Err() != nil {
				return
			}
			continue
		}
		m, err := decode(k.key, raw.Frames)
		if err != nil {
			fmt.Fprintln(os.Stderr, "toy kernel:", err)
			continue
		}
		if control {
			k.handle(s, m)
			continue
		}
		select {
		case k.reqs <- m:
		case <-k.ctx.Done():
			return
		}
	}
}

func (k *Kernel) send(s zmq4.Socket, parent *Message, msgType string, content any, metadata map[string]any) {
	c, err := json.Marshal(content)
	if err != nil {
		c = []byte("{}")
	}
	m := &Message{Header: newHeader(k.session, msgType), Content: c, Metadata: metadata, Parent: json.RawMessage("{}")}
	if parent != nil {
		m.Identities = parent.Identities
		if h, err := json.Marshal(parent.Header); err == nil {
			m.Parent = h
		}
	}
	if s == k.iopub {
		m.Identities = [][]byte{[]byte(msgType)}
		k.iopubMu.Lock()
		defer k.iopubMu.Unlock()
	}
	frames, err := encode(k.key, m)
	if err != nil {
		return
	}
	s.Send(frames)
}

func (k *Kernel) status(parent *Message, state string) {
	k.send(k.iopub, parent, "status", map[string]string{"execution_state": state}, nil)
}

func (k *Kernel) handle(s zmq4.Socket, m *Message) {
	k.status(m, "busy")
	defer k.status(m, "idle")
	reply := strings.TrimSuffix(m.Header.MsgType, "_request") + "_reply"
	switch m.Header.MsgType {
	case "kernel_info_request":
		k.send(s, m, reply, kernelInfo(), nil)
	case "execute_request":
		k.execute(s, m)
	case "is_complete_request":
		var req struct{ Code string }
		json.Unmarshal(m.Content, &req)
		st := interp.IsComplete(req.Code)
		r := map[string]string{"status": st}
		if st == "incomplete" {
			r["indent"] = ""
		}
		k.send(s, m, reply, r, nil)
	case "complete_request":
		var req struct {
			Code      string `json:"code"`
			CursorPos int    `json:"cursor_pos"`
		}
		json.Unmarshal(m.Content, &req)
		cur := byteOffset(req.Code, req.CursorPos)
		matches, start, end := k.interp().Complete(req.Code, cur)
		if matches == nil {
			matches = []string{}
		}
		k.send(s, m, reply, map[string]any{"status": "ok", "matches": matches,
			"cursor_start": utf8.RuneCountInString(req.Code[:start]), "cursor_end": utf8.RuneCountInString(req.Code[:end]),
			"metadata": map[string]any{}}, nil)
	case "inspect_request":
		var req struct {
			Code      string `json:"code"`
			CursorPos int    `json:"cursor_pos"`
		}
		json.Unmarshal(m.Content, &req)
		doc, found := k.interp().Inspect(req.Code, byteOffset(req.Code, req.CursorPos))
		data := map[string]string{}
		if found {
			data["text/plain"] = doc
		}
		k.send(s, m, reply, map[string]any{"status": "ok", "found": found, "data": data, "metadata": map[string]any{}}, nil)
	case "history_request":
		k.send(s, m, reply, map[string]any{"status": "ok", "history": []any{}}, nil)
	case "comm_info_request":
		k.send(s, m, reply, map[string]any{"status": "ok", "comms": map[string]any{}}, nil)
	case "interrupt_request":
		k.Interrupt()
		k.send(s, m, reply, map[string]any{"status": "ok"}, nil)
	case "shutdown_request":
		var req struct {
			Restart bool `json:"restart"`
		}
		json.Unmarshal(m.Content, &req)
		k.Interrupt()
		k.send(s, m, reply, map[string]any{"status": "ok", "restart": req.Restart}, nil)
		if req.Restart {
			k.reset()
			return
		}
		select {
		case <-k.done:
		default:
			close(k.done)
		}
	default:
		// Unknown requests (comm_open …) get no reply, as the protocol allows.
	}
}

func (k *Kernel) interp() *interp.Interp {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.in
}

// Interrupt cancels the running cell, if any.
func (k *Kernel) Interrupt() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cancel != nil {
		k.cancel()
	}
}

func (k *Kernel) execute(s zmq4.Socket, m *Message) {
	var req struct {
		Code         string `json:"code"`
		Silent       bool   `json:"silent"`
		StoreHistory bool   `json:"store_history"`
	}
	json.Unmarshal(m.Content, &req)
	ctx, cancel := context.WithCancel(k.ctx)
	defer cancel()
	k.mu.Lock()
	if !req.Silent {
		k.count++
	}
	n := k.count
	k.parent, k.cancel, k.sent = m, cancel, 0
	in := k.in
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.parent, k.cancel = nil, nil
		k.mu.Unlock()
	}()
	if !req.Silent {
		k.send(k.iopub, m, "execute_input", map[string]any{"code": req.Code, "execution_count": n}, nil)
	}
	res, err := in.Eval(ctx, req.Code)
	if err != nil {
		name, msg := interp.Describe(err)
		tb := []string{name + ": " + msg}
		k.send(k.iopub, m, "error", map[string]any{"ename": name, "evalue": msg, "traceback": tb}, nil)
		k.send(s, m, "execute_reply", map[string]any{"status": "error", "execution_count": n,
			"ename": name, "evalue": msg, "traceback": tb}, nil)
		return
	}
	if b, ok := res.Bundle(); ok && !req.Silent {
		k.send(k.iopub, m, "execute_result", map[string]any{"execution_count": n, "data": mimeData(b), "metadata": map[string]any{}}, nil)
	}
	k.send(s, m, "execute_reply", map[string]any{"status": "ok", "execution_count": n,
		"user_expressions": map[string]any{}, "payload": []any{}}, nil)
}

// publish sends a display_data message for the running cell.
func (k *Kernel) publish(b display.Bundle) {
	k.mu.Lock()
	p := k.parent
	k.mu.Unlock()
	k.send(k.iopub, p, "display_data", map[string]any{"data": mimeData(b), "metadata": map[string]any{}, "transient": map[string]any{}}, nil)
}

func mimeData(b display.Bundle) map[string]string {
	d := map[string]string{"text/plain": b.Text}
	if b.HTML != "" {
		d["text/html"] = b.HTML
	}
	if len(b.PNG) > 0 {
		d["image/png"] = base64.StdEncoding.EncodeToString(b.PNG)
	}
	return d
}

// stream sends what the interpreter writes as stream messages.
type stream struct {
	k    *Kernel
	name string
}

func (w *stream) Write(p []byte) (int, error) {
	k := w.k
	k.mu.Lock()
	parent := k.parent
	before := k.sent
	k.sent += len(p)
	k.mu.Unlock()
	text := string(p)
	switch {
	case before >= maxStream:
		return len(p), nil
	case before+len(p) > maxStream:
		text = text[:maxStream-before] + fmt.Sprintf("\n[output truncated after %d MiB]\n", maxStream>>20)
	}
	k.send(k.iopub, parent, "stream", map[string]string{"name": w.name, "text": strings.ToValidUTF8(text, "\uFFFD")}, nil)
	return len(p), nil
}

var _ io.Writer = (*stream)(nil)

func byteOffset(s string, runes int) int {
	i := 0
	for n := 0; n < runes && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

func kernelInfo() map[string]any {
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       ProtocolVersion,
		"implementation":         "toy",
		"implementation_version": "0.1",
		"language_info": map[string]any{
			"name": "go", "version": strings.TrimPrefix(runtime.Version(), "go"), "mimetype": "text/x-go",
			"file_extension": ".go", "pygments_lexer": "go", "codemirror_mode": "go",
		},
		"banner":     "toy: Go interpreted by yaegi, with toy's packages preloaded",
		"help_links": []any{},
	}
}

// Run serves the kernel described by the connection file until shutdown.
func Run(ctx context.Context, connFile string) error {
	conn, err := ReadConnection(connFile)
	if err != nil {
		return err
	}
	k, err := New(ctx, conn)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.Serve()
}
