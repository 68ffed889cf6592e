// embed.go: embeddings over HTTP — OpenAI's POST /v1/embeddings and
// Ollama's POST /api/embed — from an embedding model (toy.Embedder) beside
// the chat model (Options.Embedder), or alone (NewEmbedding).

package serve

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
)

// maxEmbedInputs bounds the texts of one request (OpenAI's limit).
const maxEmbedInputs = 2048

// embedRequest is the body of POST /v1/embeddings.
type embedRequest struct {
	Model          string          `json:"model"`           // any name is accepted
	Input          json.RawMessage `json:"input"`           // a string, strings, token ids, or lists of token ids
	EncodingFormat string          `json:"encoding_format"` // "float" (default) or "base64"
	Dimensions     *int            `json:"dimensions"`      // keep the first n values, then renormalise
	User           string          `json:"user"`            // ignored
}

// ollamaEmbedRequest is the body of POST /api/embed.
type ollamaEmbedRequest struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"input"`      // a string or strings
	Truncate   *bool           `json:"truncate"`   // default true: cut inputs to the context
	Dimensions *int            `json:"dimensions"` // as OpenAI's
	Options    map[string]any  `json:"options"`    // accepted, ignored (no sampling here)
	KeepAlive  json.RawMessage `json:"keep_alive"` // ignored: the model stays loaded
}

// registerEmbed adds the embedding endpoints to s for e; with e nil they
// answer that the server has no embedding model.
func (s *Server) registerEmbed(e *toy.Embedder) {
	s.mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) { s.handleEmbeddings(w, r, e) })
	s.mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) { s.handleOllamaEmbed(w, r, e) })
	s.mux.HandleFunc("POST /api/embeddings", func(w http.ResponseWriter, r *http.Request) { s.handleOllamaEmbeddings(w, r, e) }) // embed_legacy.go
	s.registerRerank(e)
}

// NewEmbedding returns a server for an embedding model alone: POST
// /v1/embeddings and /api/embed, GET /v1/models, /health and /api/version.
// opts.Name names it (default: the file name without .gguf); the other
// options concern generation and are ignored.
func NewEmbedding(e *toy.Embedder, opts Options) (*Server, error) {
	if e.Tokenizer == nil {
		return nil, fmt.Errorf("serve: %w", toy.ErrNoTokenizer)
	}
	s := &Server{name: opts.Name, created: time.Now().Unix(), log: opts.Log, turn: make(chan struct{}, 1), mux: http.NewServeMux()}
	var err error
	if s.guard, err = newGuard(opts); err != nil { // guard.go
		return nil, err
	}
	if s.name == "" {
		s.name = modelName(e)
	}
	s.registerEmbed(e)
	s.mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"object": "list", "data": []map[string]any{{
			"id": s.name, "object": "model", "created": s.created, "owned_by": "toy",
			"meta": map[string]any{"arch": e.Arch, "n_ctx_train": e.Net.ContextLength(), "n_vocab": e.Net.VocabSize(),
				"n_embd": e.Dim(), "pooling": e.Pooling.String()},
		}}})
	})
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"version": ollamaVersion})
	})
	return s, nil
}

// modelName is the embedder's file name without .gguf.
func modelName(e *toy.Embedder) string { return strings.TrimSuffix(filepath.Base(e.Path), ".gguf") }

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request, e *toy.Embedder) {
	var req embedRequest
	if err := decodeForEmbedder(w, r, &req, e); err != nil {
		writeError(w, err)
		return
	}
	if f := req.EncodingFormat; f != "" && f != "float" && f != "base64" {
		writeError(w, badRequest("encoding_format", "encoding_format must be float or base64"))
		return
	}
	inputs, err := embedInputs(e, req.Input, true)
	if err == nil {
		err = checkDimensions(e, req.Dimensions)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	vs, tokens, err := s.embed(r, e, inputs, false, req.Dimensions)
	if err != nil {
		writeError(w, err)
		return
	}
	data := make([]map[string]any, len(vs))
	for i, v := range vs {
		var out any = v
		if req.EncodingFormat == "base64" { // little-endian float32s, as OpenAI's clients decode them
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			out = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": out}
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data, "model": s.embedName(e),
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

func (s *Server) handleOllamaEmbed(w http.ResponseWriter, r *http.Request, e *toy.Embedder) {
	start := time.Now()
	var req ollamaEmbedRequest
	if err := decodeForEmbedder(w, r, &req, e); err != nil {
		writeOllamaError(w, err)
		return
	}
	inputs, err := embedInputs(e, req.Input, false)
	if err == nil {
		err = checkDimensions(e, req.Dimensions)
	}
	if err != nil {
		writeOllamaError(w, err)
		return
	}
	vs, tokens, err := s.embed(r, e, inputs, req.Truncate == nil || *req.Truncate, req.Dimensions)
	if err != nil {
		writeOllamaError(w, err)
		return
	}
	writeJSON(w, 200, map[string]any{"model": s.embedName(e), "embeddings": vs,
		"total_duration": time.Since(start).Nanoseconds(), "load_duration": 0, "prompt_eval_count": tokens})
}

// embedName is the model name embedding responses carry.
func (s *Server) embedName(e *toy.Embedder) string {
	if s.model == nil {
		return s.name
	}
	return modelName(e)
}

// decodeForEmbedder decodes the body of an embedding or rerank request into
// req, then checks that the server has an embedding model, e.
func decodeForEmbedder(w http.ResponseWriter, r *http.Request, req any, e *toy.Embedder) *apiError {
	if err := decode(w, r, req); err != nil {
		return err
	}
	if e == nil {
		return noEmbedder()
	}
	return nil
}

func noEmbedder() *apiError {
	return &apiError{Status: 404, Message: "this server has no embedding model: start it with toy serve --embed MODEL.gguf, " +
		"or serve an embedding model (bert, nomic-bert) by itself", Type: "invalid_request_error", Param: "model"}
}

// embedInputs reads "input": a string or a list of strings, each encoded
// with [CLS] and [SEP] (BOS/EOS as the model's tokenizer adds them); and,
// where ids are allowed (OpenAI), a list of token ids or of such lists,
// given the same first and last tokens when they lack them.
func embedInputs(e *toy.Embedder, raw json.RawMessage, ids bool) ([][]int32, *apiError) {
	// Each form decodes into its own variable: a failed json.Unmarshal may
	// leave a slice partly filled.
	var texts []string
	var seqs [][]int32
	var one string
	var list []string
	var seq []int32
	var nested [][]int32
	switch {
	case json.Unmarshal(raw, &one) == nil:
		texts = []string{one}
	case json.Unmarshal(raw, &list) == nil && len(list) > 0:
		texts = list
	case ids && json.Unmarshal(raw, &seq) == nil && len(seq) > 0:
		seqs = [][]int32{seq}
	case ids && json.Unmarshal(raw, &nested) == nil && len(nested) > 0:
		seqs = nested
	default:
		if ids {
			return nil, badRequest("input", "input must be a string, a list of strings, a list of token ids or a list of such lists")
		}
		return nil, badRequest("input", "input must be a string or a list of strings")
	}
	if n := len(texts) + len(seqs); n > maxEmbedInputs {
		return nil, badRequest("input", "%d inputs: at most %d", n, maxEmbedInputs)
	}
	var out [][]int32
	for _, s := range texts {
		x, err := e.Encode(s)
		if err != nil {
			return nil, &apiError{Status: 500, Message: err.Error(), Type: "server_error"}
		}
		out = append(out, x)
	}
	t := e.Tokenizer
	for _, x := range seqs {
		if len(x) == 0 {
			return nil, badRequest("input", "an empty list of token ids")
		}
		if t.AddBOS() && t.BOS() >= 0 && x[0] != t.BOS() {
			x = append([]int32{t.BOS()}, x...)
		}
		if t.AddEOS() && t.EOS() >= 0 && x[len(x)-1] != t.EOS() {
			x = append(x, t.EOS())
		}
		out = append(out, x)
	}
	return out, nil
}

func checkDimensions(e *toy.Embedder, d *int) *apiError {
	if d != nil && (*d < 1 || *d > e.Dim()) {
		return badRequest("dimensions", "dimensions must be between 1 and %d", e.Dim())
	}
	return nil
}

// embed runs the inputs while holding the model (one request at a time, as
// generation) and returns unit vectors, cut to dims values and renormalised
// if dims is set, and the tokens embedded.
func (s *Server) embed(r *http.Request, e *toy.Embedder, inputs [][]int32, truncate bool, dims *int) ([][]float32, int, *apiError) {
	if !s.acquire(r.Context()) {
		return nil, 0, &apiError{Status: 499, Message: "client went away", Type: "invalid_request_error"}
	}
	defer s.release()
	vs, err := e.EmbedIDs(inputs, toy.EmbedOptions{Truncate: truncate})
	if err != nil {
		status := 500
		if errors.Is(err, toy.ErrTooLong) || errors.Is(err, engine.ErrTokenRange) || errors.Is(err, engine.ErrEmptyPrompt) {
			status = 400
		}
		if errors.Is(err, toy.ErrNotEmbedding) {
			status = 501 // a reranker: POST /rerank
		}
		return nil, 0, &apiError{Status: status, Message: err.Error(), Type: "invalid_request_error", Param: "input"}
	}
	tokens := 0
	for _, x := range inputs {
		tokens += min(len(x), e.Net.ContextLength())
	}
	if dims != nil {
		for i, v := range vs {
			vs[i] = toy.Normalize(v[:*dims])
		}
	}
	return vs, tokens, nil
}
