// toy chat: talk with a model in the terminal, one line a turn, through the
// model's own chat template.

package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/chat"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/sample"
)

// chatInput is where toy chat reads the user's turns (a test replaces it).
var chatInput io.Reader = os.Stdin

type chatOpts struct {
	system, device, template string
	format                   formatFlags
	reply                    *replyFormat
	n, ctx, threads          int
	p                        sample.Params
	draft                    string // speculative decoding's draft model
	draftN                   int
	draftSession             *engine.Session
	stream                   io.Writer // where the reply streams as it comes
	streamed                 bool      // the stream is stdout: print the reply once
}

func chatFlagSet() (*flag.FlagSet, *chatOpts) {
	o := &chatOpts{p: sample.Params{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05}}
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.StringVar(&o.system, "system", "", "a system message to start the conversation")
	fs.IntVar(&o.n, "n", 1024, "most tokens in one reply")
	fs.IntVar(&o.ctx, "ctx", 4096, "context size in tokens, the whole conversation (at most the model's)")
	fs.StringVar(&o.template, "chat-template-file", "", "use this Jinja2 chat template instead of the model's")
	o.format.register(fs)
	fs.Func("temperature", "sampling temperature (0: greedy; default 0.8)", floatFlag(&o.p.Temperature))
	fs.IntVar(&o.p.TopK, "top-k", 40, "keep the k most likely tokens (0: all)")
	fs.Func("top-p", "nucleus sampling threshold (default 0.95)", floatFlag(&o.p.TopP))
	fs.Func("min-p", "drop tokens below min-p × the top probability (default 0.05)", floatFlag(&o.p.MinP))
	fs.Func("repeat-penalty", "repetition penalty (1: off)", floatFlag(&o.p.RepeatPenalty))
	fs.Uint64Var(&o.p.Seed, "seed", 0, "random seed")
	fs.IntVar(&o.threads, "threads", 0, "worker threads (0: all cores)")
	fs.StringVar(&o.draft, "draft", "", "speculative decoding: a smaller model over the same vocabulary guesses ahead, the model checks its guesses in one pass (the same replies, faster when it guesses well)")
	fs.IntVar(&o.draftN, "draft-n", 8, "tokens the draft guesses a round")
	deviceFlag(fs, &o.device)
	return fs, o
}

func chatFlagsDoc() *flag.FlagSet { fs, _ := chatFlagSet(); return fs }

// runChat reads a user turn per line, renders the whole conversation with
// the chat template, and streams the reply. The KV cache keeps the part of
// the conversation the new prompt shares with the last one, so each turn
// runs only its new tokens. Ctrl-C stops a reply; end of input ends the chat.
func runChat(args []string, stdout io.Writer) error {
	fs, o := chatFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if o.n <= 0 || o.ctx <= 0 {
		return fmt.Errorf("%w: --n and --ctx must be > 0, got %d and %d", errUsage, o.n, o.ctx)
	}
	if o.reply, err = o.format.read(); err != nil {
		return err
	}
	m, err := openModel(pos, o.threads, o.device, "")
	if err != nil {
		return err
	}
	defer m.Close()
	if m.Tokenizer == nil {
		return fmt.Errorf("%w: %v", toy.ErrNoTokenizer, m.TokenizerErr)
	}
	tmpl, err := chatTemplate(m, o.template)
	if err != nil {
		return err
	}
	var history []chat.Message
	if o.system != "" {
		history = append(history, chat.Message{Role: "system", Content: o.system})
	}
	s := m.NewSession(min(o.ctx, m.Net.ContextLength()))
	if o.draft != "" { // one draft session for the whole chat: it keeps what it read
		d, err := loadModel([]string{o.draft})
		if err != nil {
			return fmt.Errorf("--draft: %w", err)
		}
		defer d.Close()
		if err := m.CheckDraft(d); err != nil {
			return fmt.Errorf("--draft: %w", err)
		}
		o.draftSession = d.NewSession(s.Capacity())
	}
	// On a terminal the reply streams to stdout and is printed once; when
	// stdout is piped it gets each whole reply on its own line, and the
	// stream goes to stderr if that is a terminal (to watch it come).
	switch {
	case isTerminal(stdout):
		o.stream, o.streamed = stdout, true
	case isTerminal(os.Stderr):
		o.stream = os.Stderr
	default:
		o.stream = io.Discard
	}
	in := bufio.NewScanner(chatInput)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	for {
		fmt.Fprint(os.Stderr, ">>> ")
		if !in.Scan() {
			fmt.Fprintln(os.Stderr)
			return in.Err() // end of input ends the chat
		}
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		kept, ids, dropped, err := fitContext(m, s, tmpl, append(history, chat.Message{Role: "user", Content: line}), o)
		if errors.Is(err, engine.ErrContextFull) {
			// A turn that alone fills the context is left out; the chat goes on.
			fmt.Fprintf(os.Stderr, "toy chat: %v; say it in fewer words\n", err)
			continue
		}
		if err != nil {
			return err
		}
		if dropped > 0 {
			fmt.Fprintf(os.Stderr, "toy chat: the context (%d tokens) is full: the oldest %d turn(s) are left out\n", s.Capacity(), dropped)
		}
		history = kept
		reply, err := chatTurn(m, s, tmpl, ids, o)
		if err != nil {
			return err
		}
		if o.streamed {
			fmt.Fprintln(stdout)
		} else {
			fmt.Fprintln(stdout, reply.text)
		}
		if reply.reason == "context" || reply.reason == "length" && reply.bounded {
			fmt.Fprintf(os.Stderr, "toy chat: the reply stopped at the end of the context (%d tokens)\n", s.Capacity())
		}
		history = append(history, chat.Message{Role: "assistant", Content: reply.text})
	}
}

// fitContext renders history (whose last message is the user's new turn)
// and, while the prompt leaves less than room for a reply, drops the oldest
// turns (a user message and the reply to it; a system message stays). It
// returns the history kept, its prompt and how many turns it dropped, or an
// error wrapping engine.ErrContextFull when the new turn alone does not fit.
// It leaves history's elements as they are.
//
// The room kept for a reply is --n, at most half the context: a chat on a
// short context (the built-in model's 128 tokens) keeps going, each reply
// bounded by what is left.
func fitContext(m *toy.Model, s *engine.Session, tmpl *chat.Template, history []chat.Message, o *chatOpts) ([]chat.Message, []int32, int, error) {
	room := min(o.n, s.Capacity()/2)
	dropped := 0
	for {
		ids, err := m.EncodeChat(tmpl, history, m.ChatOptions(true))
		if err != nil {
			return nil, nil, 0, err
		}
		first := 0 // the oldest message that may go
		if len(history) > 0 && history[0].Role == "system" {
			first = 1
		}
		if len(ids)+room <= s.Capacity() || len(history)-first <= 1 {
			if len(ids) >= s.Capacity() {
				return nil, nil, 0, fmt.Errorf("%w: this turn is %d tokens, the context %d (--ctx)", engine.ErrContextFull, len(ids), s.Capacity())
			}
			return history, ids, dropped, nil
		}
		// Drop the oldest message, and the reply that followed a user's.
		n := 1
		if history[first].Role == "user" && first+1 < len(history)-1 && history[first+1].Role == "assistant" {
			n = 2
		}
		history = append(history[:first:first], history[first+n:]...)
		dropped++
	}
}

// chatTemplate is the template file's, or else the model's, or nil (plain
// concatenation) for a model without one.
func chatTemplate(m *toy.Model, file string) (*chat.Template, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		return chat.Parse(string(b))
	}
	t, err := m.ChatTemplate()
	if err != nil {
		fmt.Fprintf(os.Stderr, "toy chat: %v; turns are joined one per line\n", err)
		return nil, nil
	}
	return t, nil
}

type chatReply struct {
	text, reason string
	bounded      bool // the context, not --n, bounded the reply's length
}

// chatTurn generates the assistant's reply to the prompt ids (the whole
// conversation, rendered), streaming its text to o.stream.
func chatTurn(m *toy.Model, s *engine.Session, tmpl *chat.Template, ids []int32, o *chatOpts) (chatReply, error) {
	// Keep the cached tokens the prompt starts with; at least one token is
	// run anew, for the logits of the reply's first token.
	keep := 0
	for old := s.Tokens(); keep < len(old) && keep < len(ids)-1 && old[keep] == ids[keep]; keep++ {
	}
	s.Truncate(keep)
	if len(ids) >= s.Capacity() {
		return chatReply{}, fmt.Errorf("%w: the conversation is %d tokens, the context %d (--ctx)", engine.ErrContextFull, len(ids), s.Capacity())
	}
	dec := m.Tokenizer.NewDecoder()
	var text strings.Builder
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// gpt-oss writes harmony: its analysis is shown (on stderr) but is not
	// the reply; only the final message is.
	var harmony *chat.Harmony
	if tmpl != nil && tmpl.WritesHarmony() {
		if ids, ok := chat.FindHarmonyTokens(m.Tokenizer.ID); ok {
			harmony = chat.NewHarmony(ids)
		}
	}
	thinking := false
	gen := engine.Options{
		MaxTokens: min(o.n, s.Capacity()-len(ids)),
		Sample:    o.p,
		Stop:      m.Tokenizer.IsEOG,
		OnToken: func(id int32) {
			if m.Tokenizer.IsEOG(id) {
				return
			}
			piece := dec.Push(id)
			if harmony != nil {
				switch harmony.Push(id, piece) {
				case chat.HarmonyReasoning:
					if !thinking {
						fmt.Fprint(os.Stderr, "(thinking) ")
						thinking = true
					}
					fmt.Fprint(os.Stderr, piece)
					return
				case chat.HarmonyContent:
					if thinking {
						fmt.Fprint(os.Stderr, "\n\n")
						thinking = false
					}
				default:
					return
				}
			}
			text.WriteString(piece)
			fmt.Fprint(o.stream, piece)
		},
	}
	gen.Draft, gen.DraftTokens = o.draftSession, o.draftN
	if err := o.reply.constrain(m, &gen.Constraint); err != nil {
		return chatReply{}, err
	}
	r, err := engine.Generate(ctx, s, ids[keep:], gen)
	if err != nil && r.Reason != "canceled" {
		return chatReply{}, err
	}
	rest := dec.Flush()
	text.WriteString(rest)
	fmt.Fprint(o.stream, rest)
	if o.stream == os.Stderr {
		fmt.Fprintln(os.Stderr)
	}
	return chatReply{text: strings.TrimSpace(text.String()), reason: r.Reason, bounded: gen.MaxTokens < o.n}, nil
}
