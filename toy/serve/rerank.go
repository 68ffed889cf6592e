// rerank.go: reranking over HTTP — llama.cpp's POST /rerank (and
// /v1/rerank, /reranking, /v1/reranking) in Jina's shape, or in Hugging
// Face TEI's when the documents come as "texts" — from a reranker served
// as the embedding model (toy.Embedder.Reranker).

package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/engine"
)

// rerankRequest is the body of POST /rerank.
type rerankRequest struct {
	Model      string          `json:"model"` // any name is accepted
	Query      *string         `json:"query"`
	Documents  json.RawMessage `json:"documents"`   // Jina: a list of strings
	Texts      json.RawMessage `json:"texts"`       // TEI: a list of strings
	TopN       *int            `json:"top_n"`       // default: all
	ReturnText bool            `json:"return_text"` // TEI: each result carries its text
}

// registerRerank adds the reranking endpoints to s for e (nil: the server
// has no embedding model).
func (s *Server) registerRerank(e *toy.Embedder) {
	for _, path := range []string{"/rerank", "/v1/rerank", "/reranking", "/v1/reranking"} {
		s.mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) { s.handleRerank(w, r, e) })
	}
}

// handleRerank scores each document against the query and answers the
// results sorted best first, cut to top_n: Jina's {model, object, usage,
// results: [{index, relevance_score}]}, or for a TEI request (texts) a list
// of {index, score, text?}. Scores are the reranker's logits, as
// llama.cpp's server gives them.
func (s *Server) handleRerank(w http.ResponseWriter, r *http.Request, e *toy.Embedder) {
	var req rerankRequest
	if err := decodeForEmbedder(w, r, &req, e); err != nil {
		writeError(w, err)
		return
	}
	if !e.Reranker() {
		writeError(w, &apiError{Status: 501, Type: "not_supported_error",
			Message: "the served model is no reranker (rank pooling): serve one, such as bge-reranker, to rerank"})
		return
	}
	if req.Query == nil {
		writeError(w, badRequest("query", `"query" must be provided as a string`))
		return
	}
	tei := len(req.Texts) > 0
	raw, field := req.Documents, "documents"
	if tei {
		raw, field = req.Texts, "texts"
	}
	var docs []string
	if err := json.Unmarshal(raw, &docs); err != nil || len(docs) == 0 {
		writeError(w, badRequest(field, `"%s" must be a non-empty list of strings`, field))
		return
	}
	if len(docs) > maxEmbedInputs {
		writeError(w, badRequest(field, "%d documents: at most %d", len(docs), maxEmbedInputs))
		return
	}
	topN := len(docs)
	if req.TopN != nil {
		if *req.TopN < 0 {
			writeError(w, badRequest("top_n", "top_n must be ≥ 0"))
			return
		}
		topN = min(*req.TopN, topN)
	}
	inputs := make([][]int32, len(docs))
	tokens := 0
	for i, d := range docs {
		ids, err := e.RankInput(*req.Query, d)
		if err != nil {
			writeError(w, &apiError{Status: 500, Message: err.Error(), Type: "server_error"})
			return
		}
		inputs[i] = ids
		tokens += len(ids)
	}
	if !s.acquire(r.Context()) {
		return // the client went away
	}
	scores, err := e.RankIDs(inputs, toy.EmbedOptions{})
	s.release()
	if err != nil {
		status := 500
		if errors.Is(err, toy.ErrTooLong) || errors.Is(err, engine.ErrTokenRange) || errors.Is(err, engine.ErrEmptyPrompt) {
			status = 400
		}
		writeError(w, &apiError{Status: status, Message: err.Error(), Type: "invalid_request_error", Param: field})
		return
	}
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	order = order[:topN]
	results := make([]map[string]any, len(order))
	for k, i := range order {
		if tei {
			results[k] = map[string]any{"index": i, "score": scores[i]}
			if req.ReturnText {
				results[k]["text"] = docs[i]
			}
		} else {
			results[k] = map[string]any{"index": i, "relevance_score": scores[i]}
		}
	}
	if tei {
		writeJSON(w, 200, results)
		return
	}
	writeJSON(w, 200, map[string]any{"model": s.embedName(e), "object": "list", "results": results,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}
