// toy serve: an HTTP server over one model that speaks OpenAI's API and
// Ollama's.

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/serve"
)

type serveOpts struct {
	addr, device, name, template string
	embed                        string // an embedding model to serve beside the chat model (embed.go)
	draft                        string // speculative decoding's draft model
	threads, ctx, draftN         int
	quiet                        bool
	// who may call (toy/serve/guard.go)
	apiKeys, allowHosts, cors stringList
	apiKeyFile                string
	writeTimeout              time.Duration
	parallel, queue           int
}

func serveFlagSet() (*flag.FlagSet, *serveOpts) {
	o := &serveOpts{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; 0.0.0.0:8080 for every interface)")
	fs.IntVar(&o.ctx, "ctx", 0, "context size in tokens, prompt and reply together (0: the model's, at most 4096; above the trained context only as far as the model's RoPE scaling stretches it)")
	fs.IntVar(&o.threads, "threads", 0, "worker threads (0: all cores)")
	fs.StringVar(&o.name, "name", "", "model id in OpenAI responses and Ollama's /api/tags (default: the file name)")
	fs.StringVar(&o.template, "chat-template-file", "", "use this Jinja2 chat template instead of the model's")
	fs.BoolVar(&o.quiet, "quiet", false, "do not log requests")
	fs.StringVar(&o.embed, "embed", "", "also serve embeddings (POST /v1/embeddings, /api/embed) from this embedding model (all-MiniLM, bge, nomic-embed-text …), or reranking (POST /rerank) by this reranker")
	fs.StringVar(&o.draft, "draft", "", "speculative decoding: a smaller model over the same vocabulary guesses ahead, the model checks its guesses in one pass (the same replies, faster when it guesses well; llama-server's --model-draft)")
	fs.IntVar(&o.draftN, "draft-n", 8, "tokens the draft guesses a round")
	fs.Var(&o.apiKeys, "api-key", "require the header Authorization: Bearer `KEY` on every endpoint but GET /health and the page at / (repeatable; also $TOY_API_KEY)")
	fs.StringVar(&o.apiKeyFile, "api-key-file", "", "read API keys from this `FILE`, one a line (# starts a comment)")
	fs.Var(&o.allowHosts, "allow-host", "also accept requests whose Host header is `NAME` (repeatable; * for any): loopback names, the --addr host and the address connected to are always accepted, other names refused (403) against DNS rebinding")
	fs.Var(&o.cors, "cors", "allow web pages from `ORIGIN` (scheme://host[:port]; repeatable; * for any) to call the API: CORS is off without it")
	fs.DurationVar(&o.writeTimeout, "write-timeout", 30*time.Second, "a reply's write that takes longer (a client that stopped reading) cancels its request and frees its slot (0: no limit)")
	fs.IntVar(&o.parallel, "parallel", 4, "slots: requests generating at once, each with a KV cache of --ctx positions (made when first used), their steps decoded as one batch (llama-server's --parallel; 1 with --draft)")
	fs.IntVar(&o.queue, "queue", 64, "requests that may wait for a slot; past them the server answers 503 with Retry-After")
	deviceFlag(fs, &o.device)
	return fs, o
}

func serveFlagsDoc() *flag.FlagSet { fs, _ := serveFlagSet(); return fs }

// loadServed loads what toy serve serves: the language model named (or the
// default model), or, when it is a text encoder (an embedding model or a
// reranker, whose family toy.Load refuses as not a language model), the
// encoder, which toy serve serves by itself.
func loadServed(pos []string) (*toy.Model, *toy.Embedder, error) {
	m, err := loadModel(pos)
	if err == nil || !errors.Is(err, toy.ErrUnknownArch) || len(pos) != 1 {
		return m, nil, err
	}
	e, err := loadEmbedder(pos[0]) // embed.go; for an unknown architecture it fails as toy.Load did
	return nil, e, err
}

func runServe(args []string, stdout io.Writer) error {
	fs, o := serveFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return fmt.Errorf("%w: toy serve [MODEL] [--addr HOST:PORT]", errUsage)
	}
	if o.ctx < 0 {
		return fmt.Errorf("--ctx must be ≥ 0, got %d", o.ctx)
	}
	if err := setThreads(o.threads); err != nil {
		return err
	}
	if err := useDevice(o.device); err != nil {
		return err
	}
	opts := serve.Options{Name: o.name, ContextSize: o.ctx, CORSOrigins: o.cors, WriteTimeout: o.writeTimeout,
		Parallel: o.parallel, Queue: o.queue}
	if o.writeTimeout <= 0 {
		opts.WriteTimeout = -1 // none
	}
	if opts.APIKeys, err = serveAPIKeys(o); err != nil {
		return err
	}
	opts.AllowedHosts = serveAllowedHosts(o)
	if o.template != "" {
		b, err := os.ReadFile(o.template)
		if err != nil {
			return err
		}
		opts.ChatTemplate = string(b)
	}
	if !o.quiet {
		opts.Log = log.New(os.Stderr, "toy serve: ", log.LstdFlags)
	}
	var s *serve.Server
	m, e, err := loadServed(pos)
	if err != nil {
		return err
	}
	if e != nil { // an embedding model or a reranker by itself, as llama-server --embedding/--reranking
		defer e.Close()
		if s, err = serve.NewEmbedding(e, opts); err != nil {
			return err
		}
		what := "embeddings (POST /v1/embeddings, /api/embed)"
		if e.Reranker() {
			what = "reranking (POST /rerank, /v1/rerank)"
		}
		fmt.Fprintf(os.Stderr, "toy serve: %s, %s\n", e, what)
	} else {
		defer m.Close()
		if o.embed != "" {
			e, err := loadEmbedder(o.embed) // embed.go
			if err != nil {
				return fmt.Errorf("--embed: %w", err)
			}
			defer e.Close()
			opts.Embedder = e
		}
		if o.draft != "" {
			d, err := loadModel([]string{o.draft})
			if err != nil {
				return fmt.Errorf("--draft: %w", err)
			}
			defer d.Close()
			opts.Draft, opts.DraftTokens = d, o.draftN
		}
		if s, err = serve.New(m, opts); err != nil {
			return err
		}
		template := "the model's chat template"
		if !s.HasChatTemplate() {
			template = "no chat template: chat messages are joined one per line"
		} else if f := s.ToolCallFormat(); f != "" {
			template += ", tool calls in its " + f + " format"
		}
		if opts.Draft != nil {
			template += fmt.Sprintf(", draft %s guessing %d tokens a round", opts.Draft, o.draftN)
		}
		fmt.Fprintf(os.Stderr, "toy serve: %s, context %d, %s\n", m, s.ContextSize(), template)
		if e := opts.Embedder; e != nil {
			what := "embeddings from the %s (POST /v1/embeddings, /api/embed)\n"
			if e.Reranker() {
				what = "reranking by the %s (POST /rerank, /v1/rerank)\n"
			}
			fmt.Fprintf(os.Stderr, "toy serve: "+what, e)
		}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return failure(err)
	}
	fmt.Fprintf(os.Stderr, "toy serve: listening on http://%s (OpenAI's API under /v1, Ollama's under /api; Ctrl-C stops)\n", ln.Addr())
	if h := hostOf(o.addr); (h == "" || net.ParseIP(h).IsUnspecified()) && len(o.allowHosts) == 0 {
		fmt.Fprintln(os.Stderr, "toy serve: on every interface: clients may name it by IP address; by a host name needs --allow-host NAME")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	requests, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return requests }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return failure(err)
	case <-ctx.Done():
	}
	// Graceful: stop accepting, cancel the requests in flight (their
	// generation stops at the next token), wait a little for them.
	fmt.Fprintln(os.Stderr, "toy serve: shutting down")
	cancelRequests()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return failure(err)
	}
	return nil
}

// serveAPIKeys gathers toy serve's API keys: --api-key, $TOY_API_KEY and
// the lines of --api-key-file (blank lines and # comments left out).
func serveAPIKeys(o *serveOpts) ([]string, error) {
	keys := append([]string(nil), o.apiKeys...)
	if k := strings.TrimSpace(os.Getenv("TOY_API_KEY")); k != "" {
		keys = append(keys, k)
	}
	if o.apiKeyFile != "" {
		b, err := os.ReadFile(o.apiKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--api-key-file: %w", err)
		}
		n := len(keys)
		for line := range strings.Lines(string(b)) {
			if k, _, _ := strings.Cut(line, "#"); strings.TrimSpace(k) != "" {
				keys = append(keys, strings.TrimSpace(k))
			}
		}
		if len(keys) == n {
			return nil, fmt.Errorf("--api-key-file %s holds no key", o.apiKeyFile)
		}
	}
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--api-key: an empty key")
		}
	}
	return keys, nil
}

// serveAllowedHosts is --allow-host and the host --addr binds (a name, or
// an address such as 0.0.0.0), which requests may then name.
func serveAllowedHosts(o *serveOpts) []string {
	hosts := append([]string(nil), o.allowHosts...)
	if h := hostOf(o.addr); h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// hostOf is the host of a host:port address ("" for ":8080").
func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return h
}
