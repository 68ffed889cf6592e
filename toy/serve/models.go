// models.go: GET /v1/models/{id}, OpenAI's retrieve-model endpoint.

package serve

import (
	"net/http"
	"strings"
)

// modelObject is the served model as GET /v1/models lists it.
func (s *Server) modelObject() map[string]any {
	return map[string]any{
		"id": s.name, "object": "model", "created": s.created, "owned_by": "toy",
		"meta": map[string]any{"arch": s.model.Arch, "n_ctx": s.ctxSize, "n_ctx_train": s.model.ContextLength(),
			"n_vocab": s.model.VocabSize(), "chat_template": s.tmpl != nil},
	}
}

// handleModel answers GET /v1/models/{id}: the model object for the
// served model's id, else OpenAI's 404 (code "model_not_found").
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/models/") // (ServeHTTP routes with mux.Handler, which sets no path values)
	if id != s.name {
		writeError(w, &apiError{Status: 404, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Message: "The model '" + id + "' does not exist: this server has only '" + s.name + "'"})
		return
	}
	writeJSON(w, 200, s.modelObject())
}
