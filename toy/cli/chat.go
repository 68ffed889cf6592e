// toy chat: talk with a model in the terminal, one line a turn, through the
// model's own chat template.

package cli

import (
	"bufio"
	"context"
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
	"github.com/toyml/toy/toy/tensor"
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
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if o.n <= 0 || o.ctx <= 0 {
		return fmt.Errorf("--n and --ctx must be > 0, got %d and %d", o.n, o.ctx)
	}
	if o.reply, err = o.format.read(); err != nil {
		return err
	}
	if o.threads > 0 {
		tensor.SetThreads(o.threads)
	}
	if err := useDevice(o.device); err != nil {
		return err
	}
	m, err := loadModel(pos)
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
	in := bufio.NewScanner(chatInput)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	for {
		fmt.Fprint(os.Stderr, ">>> ")
		if !in.Scan() {
			fmt.Fprintln(os.Stderr)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		history = append(history, chat.Message{Role: "user", Content: line})
		reply, err := chatTurn(m, s, tmpl, history, o)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, reply.text)
		history = append(history, chat.Message{Role: "assistant", Content: reply.text})
		if reply.reason == "context" {
			return fmt.Errorf("%w: the conversation fills the context of %d tokens (--ctx)", engine.ErrContextFull, s.Capacity())
		}
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

type chatReply struct{ text, reason string }

// chatTurn generates the assistant's reply to history, streaming its text
// to the terminal (stderr keeps stdout for the replies alone when piped).
func chatTurn(m *toy.Model, s *engine.Session, tmpl *chat.Template, history []chat.Message, o *chatOpts) (chatReply, error) {
	ids, err := m.EncodeChat(tmpl, history, m.ChatOptions(true))
	if err != nil {
		return chatReply{}, err
	}
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
			fmt.Fprint(os.Stderr, piece)
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
	text.WriteString(dec.Flush())
	fmt.Fprintln(os.Stderr)
	return chatReply{text: strings.TrimSpace(text.String()), reason: r.Reason}, nil
}
