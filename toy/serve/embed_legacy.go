// embed_legacy.go: Ollama's older embedding endpoint, POST /api/embeddings
// ({model, prompt} → {embedding}), which clients written before /api/embed
// still call.

package serve

import (
	"encoding/json"
	"net/http"

	"github.com/toyml/toy/toy"
)

// ollamaEmbeddingsRequest is the body of POST /api/embeddings.
type ollamaEmbeddingsRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt"`
	Options   map[string]any  `json:"options"`    // accepted, ignored
	KeepAlive json.RawMessage `json:"keep_alive"` // ignored: the model stays loaded
	Truncate  *bool           `json:"truncate"`   // default true
}

// handleOllamaEmbeddings answers POST /api/embeddings: one vector for one
// prompt, {"embedding": […]} (an empty prompt gets an empty one, as in
// Ollama). The vector is the embedder's, of unit length, as /api/embed's.
func (s *Server) handleOllamaEmbeddings(w http.ResponseWriter, r *http.Request, e *toy.Embedder) {
	var req ollamaEmbeddingsRequest
	if err := decodeForEmbedder(w, r, &req, e); err != nil {
		writeOllamaError(w, err)
		return
	}
	if req.Prompt == "" {
		writeJSON(w, 200, map[string]any{"embedding": []float32{}})
		return
	}
	x, err := e.Encode(req.Prompt)
	if err != nil {
		writeOllamaError(w, &apiError{Status: 500, Message: err.Error(), Type: "server_error"})
		return
	}
	vs, _, ae := s.embed(r, e, [][]int32{x}, req.Truncate == nil || *req.Truncate, nil)
	if ae != nil {
		writeOllamaError(w, ae)
		return
	}
	writeJSON(w, 200, map[string]any{"embedding": vs[0]})
}
