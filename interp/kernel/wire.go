// The Jupyter messaging protocol (v5.3) wire format: signed multipart
// messages over ZeroMQ sockets.

package kernel

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-zeromq/zmq4"
)

// ProtocolVersion is the messaging protocol version the kernel speaks.
const ProtocolVersion = "5.3"

const delimiter = "<IDS|MSG>"

// Header is a message header.
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one protocol message. Identities route replies on ROUTER sockets.
type Message struct {
	Identities [][]byte
	Header     Header
	Parent     json.RawMessage // the parent header, "{}" when none
	Metadata   map[string]any
	Content    json.RawMessage
	Buffers    [][]byte
}

// ErrSignature is returned for a message whose HMAC does not verify.
var ErrSignature = errors.New("kernel: bad message signature")

func sign(key []byte, parts ...[]byte) string {
	if len(key) == 0 {
		return ""
	}
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// decode parses and verifies the frames of a message.
func decode(key []byte, frames [][]byte) (*Message, error) {
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], []byte(delimiter)) {
		i++
	}
	if len(frames)-i < 6 {
		return nil, fmt.Errorf("kernel: malformed message of %d frames", len(frames))
	}
	m := &Message{Identities: frames[:i]}
	sig, h, p, md, c := frames[i+1], frames[i+2], frames[i+3], frames[i+4], frames[i+5]
	if len(key) > 0 && !hmac.Equal(sig, []byte(sign(key, h, p, md, c))) {
		return nil, ErrSignature
	}
	if err := json.Unmarshal(h, &m.Header); err != nil {
		return nil, fmt.Errorf("kernel: header: %w", err)
	}
	m.Parent = json.RawMessage(p)
	if len(md) > 0 {
		json.Unmarshal(md, &m.Metadata)
	}
	m.Content = json.RawMessage(c)
	m.Buffers = frames[i+6:]
	return m, nil
}

// encode signs m into frames.
func encode(key []byte, m *Message) (zmq4.Msg, error) {
	h, err := json.Marshal(m.Header)
	if err != nil {
		return zmq4.Msg{}, err
	}
	p := []byte(m.Parent)
	if len(p) == 0 {
		p = []byte("{}")
	}
	md := m.Metadata
	if md == nil {
		md = map[string]any{}
	}
	mdb, _ := json.Marshal(md)
	c := []byte(m.Content)
	if len(c) == 0 {
		c = []byte("{}")
	}
	frames := append([][]byte{}, m.Identities...)
	frames = append(frames, []byte(delimiter), []byte(sign(key, h, p, mdb, c)), h, p, mdb, c)
	frames = append(frames, m.Buffers...)
	return zmq4.NewMsgFrom(frames...), nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func newHeader(session, msgType string) Header {
	return Header{MsgID: newID(), Session: session, Username: "toy", Date: time.Now().UTC().Format(time.RFC3339Nano),
		MsgType: msgType, Version: ProtocolVersion}
}
