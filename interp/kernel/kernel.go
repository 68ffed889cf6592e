// Package kernel is toy's Jupyter kernel: the messaging protocol (v5.3) over
// the pure-Go ZeroMQ of github.com/go-zeromq/zmq4, evaluating cells with
// package interp. State persists across cells; an interrupt_request (or
// SIGINT) cancels the running cell, including toy's long compiled calls
// (m.Generate …, see interp.Interp.Eval); a panic, a syntax error or an
// endless loop is reported and the kernel keeps serving, as it does when a
// front end disappears mid-cell (a later one can connect and carry on).
//
// Standard input: a cell reading os.Stdin (fmt.Scanln, bufio …) sends an
// input_request on the stdin channel when the front end allowed it
// (execute_request allow_stdin); otherwise the read fails with ErrNoStdin,
// also noted on the cell's stderr. Stream output is coalesced and sent in
// messages of at most 64 KiB, at most every 50 ms, and at most 4 MiB a cell.
//
//	toysh kernel CONNECTION_FILE
package kernel

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
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

// Stream output limits: what a cell prints is buffered and sent in stream
// messages of at most streamChunk bytes, flushed when a chunk is full or
// streamEvery after the first unsent write; past maxStream bytes a cell's
// output is dropped with a note, so a runaway print loop cannot flood the
// front end.
const (
	maxStream   = 4 << 20
	streamChunk = 64 << 10
	streamEvery = 50 * time.Millisecond
)

// ErrNoStdin is what a cell's read of standard input returns when the front
// end did not allow input (execute_request allow_stdin false).
var ErrNoStdin = errors.New("kernel: the cell reads standard input, but this front end does not accept input (allow_stdin is false)")

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
	cellCtx context.Context    // the running cell's context
	allowIn bool               // the running cell's front end accepts input
	noted   bool               // ErrNoStdin was noted on stderr for the running cell
	sent    int                // stream bytes written by the running cell
	done    chan struct{}
	reqs    chan *Message

	stdout, stderr *stream
	input          *stdinReader
	replies        chan *Message // input_reply messages from the stdin channel
}

// New binds the sockets of conn and starts an interpreter.
func New(ctx context.Context, conn Connection) (*Kernel, error) {
	ctx, stop := context.WithCancel(ctx)
	k := &Kernel{conn: conn, key: []byte(conn.Key), session: newID(), ctx: ctx, stop: stop,
		done: make(chan struct{}), reqs: make(chan *Message, 16), replies: make(chan *Message, 1)}
	k.stdout, k.stderr, k.input = &stream{k: k, name: "stdout"}, &stream{k: k, name: "stderr"}, &stdinReader{k: k}
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
		Stdin:   k.input,
		Stdout:  k.stdout,
		Stderr:  k.stderr,
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
	go k.stdinLoop()
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

// stdinLoop reads input_reply messages from the stdin channel; the newest
// one waits for the cell reading standard input.
func (k *Kernel) stdinLoop() {
	for {
		raw, err := k.stdin.Recv()
		if err != nil {
			if k.ctx.Err() != nil {
				return
			}
			continue
		}
		m, err := decode(k.key, raw.Frames)
		if err != nil || m.Header.MsgType != "input_reply" {
			continue
		}
		select {
		case <-k.replies: // drop an unclaimed older reply
		default:
		}
		k.replies <- m
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
		AllowStdin   bool   `json:"allow_stdin"`
	}
	json.Unmarshal(m.Content, &req)
	ctx, cancel := context.WithCancel(k.ctx)
	defer cancel()
	k.mu.Lock()
	if !req.Silent {
		k.count++
	}
	n := k.count
	k.parent, k.cancel, k.cellCtx, k.allowIn, k.noted, k.sent = m, cancel, ctx, req.AllowStdin, false, 0
	k.input.buf = nil
	in := k.in
	k.mu.Unlock()
	defer func() {
		k.flush()
		k.mu.Lock()
		k.parent, k.cancel, k.cellCtx = nil, nil, nil
		k.mu.Unlock()
	}()
	if !req.Silent {
		k.send(k.iopub, m, "execute_input", map[string]any{"code": req.Code, "execution_count": n}, nil)
	}
	res, err := in.Eval(ctx, req.Code)
	k.flush()
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

// publish sends a display_data message for the running cell, after the
// output printed before it; a bundle with an ID carries it as the
// display_id, and an Update of it is an update_display_data.
func (k *Kernel) publish(b display.Bundle) {
	k.flush()
	k.mu.Lock()
	p := k.parent
	k.mu.Unlock()
	kind, transient := "display_data", map[string]any{}
	if b.ID != "" {
		transient["display_id"] = b.ID
		if b.Update {
			kind = "update_display_data"
		}
	}
	k.send(k.iopub, p, kind, map[string]any{"data": mimeData(b), "metadata": map[string]any{}, "transient": transient}, nil)
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

// stream sends what the interpreter writes as stream messages, coalesced
// and chunked (see streamChunk).
type stream struct {
	k    *Kernel
	name string

	mu     sync.Mutex
	buf    []byte
	parent *Message    // the cell buf belongs to
	timer  *time.Timer // pending flush, nil when none
}

func (w *stream) Write(p []byte) (int, error) {
	k := w.k
	n := len(p)
	k.mu.Lock()
	parent := k.parent
	before := k.sent
	k.sent += n
	k.mu.Unlock()
	var note string
	switch {
	case before >= maxStream:
		return n, nil
	case before+len(p) > maxStream:
		p = p[:maxStream-before]
		note = fmt.Sprintf("\n[output truncated after %d MiB]\n", maxStream>>20)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parent != parent {
		w.flushLocked(true)
		w.parent = parent
	}
	w.buf = append(append(w.buf, p...), note...)
	switch {
	case len(w.buf) >= streamChunk:
		w.flushLocked(false)
	case w.timer == nil:
		w.timer = time.AfterFunc(streamEvery, w.flush)
	}
	return n, nil
}

func (w *stream) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked(true)
}

// flushLocked sends the buffer in chunks of at most streamChunk bytes, cut
// at UTF-8 boundaries; unless all, a partial chunk (or rune) at the end
// waits for more output.
func (w *stream) flushLocked(all bool) {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	for len(w.buf) > 0 && (all || len(w.buf) >= streamChunk) {
		n := min(len(w.buf), streamChunk)
		for cut := n; n < len(w.buf) && cut > n-utf8.UTFMax && cut > 0; cut-- {
			if utf8.RuneStart(w.buf[cut]) {
				n = cut
				break
			}
		}
		text := strings.ToValidUTF8(string(w.buf[:n]), "\uFFFD")
		w.buf = w.buf[n:]
		w.k.send(w.k.iopub, w.parent, "stream", map[string]string{"name": w.name, "text": text}, nil)
	}
	if len(w.buf) == 0 {
		w.buf = nil // let a flood's buffer go
	} else if w.timer == nil {
		w.timer = time.AfterFunc(streamEvery, w.flush)
	}
}

// flush sends the output the running cell has printed so far.
func (k *Kernel) flush() {
	k.stdout.flush()
	k.stderr.flush()
}

// stdinReader is the cells' standard input: a read with nothing buffered asks
// the front end for a line (input_request on the stdin channel) and waits for
// its input_reply, or fails with ErrNoStdin when the front end did not allow
// input, or with an interrupt.
type stdinReader struct {
	k   *Kernel
	buf []byte // guarded by k.mu
}

func (r *stdinReader) Read(p []byte) (int, error) {
	k := r.k
	k.mu.Lock()
	if len(r.buf) > 0 {
		n := copy(p, r.buf)
		r.buf = r.buf[n:]
		k.mu.Unlock()
		return n, nil
	}
	parent, ctx, allow, noted := k.parent, k.cellCtx, k.allowIn, k.noted
	if !allow {
		k.noted = true
	}
	k.mu.Unlock()
	if parent == nil || ctx == nil {
		return 0, io.EOF
	}
	if !allow {
		if !noted {
			fmt.Fprintln(k.stderr, ErrNoStdin)
		}
		return 0, ErrNoStdin
	}
	k.flush() // a prompt printed before the read shows first
	select {
	case <-k.replies: // a stale reply
	default:
	}
	k.send(k.stdin, parent, "input_request", map[string]any{"prompt": "", "password": false}, nil)
	select {
	case m := <-k.replies:
		var rep struct {
			Value string `json:"value"`
		}
		json.Unmarshal(m.Content, &rep)
		k.mu.Lock()
		r.buf = []byte(rep.Value + "\n")
		n := copy(p, r.buf)
		r.buf = r.buf[n:]
		k.mu.Unlock()
		return n, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("kernel: waiting for input: %w", interp.ErrInterrupted)
	}
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
