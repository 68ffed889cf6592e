// Package hub finds models: on this machine (Discover, Resolve) and on the
// Hugging Face hub (Fetch).
//
// # References
//
// Every command that takes a model accepts a reference, which Resolve turns
// into the path of a GGUF file:
//
//	./models/tiny.gguf               a path
//	tiny.gguf                        a file name that discovery found
//	llama3.2, qwen2.5:0.5b           an Ollama name (":latest" when no tag)
//	hf.co/owner/repo:Q8_0            an Ollama name for a Hugging Face pull
//	owner/repo, owner/repo/f.gguf    a Hugging Face repo (in the HF cache)
//	publisher/model                  an LM Studio model
//
// A reference that matches more than one model is an error (ErrAmbiguous)
// that lists the candidates.
//
// # Where models are found
//
// Discover looks in $TOY_MODEL_DIR (a list, like PATH), ./models, ./data, the
// Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub; snapshots resolved through their symlinks), Ollama
// ($OLLAMA_MODELS, else ~/.ollama/models: manifests map names to blobs, which
// have no .gguf suffix and are recognised by the GGUF magic), LM Studio
// (~/.lmstudio/models, ~/.cache/lm-studio/models) and ~/models.
//
// # Error Handling
//
// A broken symlink, a blob that is missing or not GGUF, or an unreadable
// header is a row with Err set, never a failure of the whole listing. Resolve
// returns errors wrapping ErrNotFound or ErrAmbiguous; Fetch wraps
// ErrNotFound, ErrUnauthorized, ErrChecksum or ErrInterrupted. Fetch writes
// to a temporary name in the cache and renames it when the checksum matches,
// so the cache never holds a half-written model.
package hub
