// Loading a checkpoint and running it: Load, Forward, LogProbs, Generate.

package toy

import (
	"context"
	"errors"
	"fmt"

	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	_ "github.com/toyml/toy/toy/models/all" // every built-in architecture
	"github.com/toyml/toy/toy/models/vit"
	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tokenizer"
)

// ErrUnknownArch is returned for GGUF files of an architecture no family
// registered (package models).
var ErrUnknownArch = models.ErrUnknownArch

// Archs returns the GGUF architectures registered with package models,
// sorted: toy's own and any a program registered.
func Archs() []string { return models.Archs() }

// Model is a loaded checkpoint: the GGUF file (memory-mapped), the
// architecture built over its weights, and its tokenizer.
type Model struct {
	Path      string
	Arch      string
	File      *gguf.File
	Net       models.Model         // the architecture's model: *llama.Model, *gpt2.Model, …, or a user's
	Tokenizer *tokenizer.Tokenizer // nil when the file carries none (see TokenizerErr)

	// TokenizerErr says why Tokenizer is nil.
	TokenizerErr error
}

// ErrNoTokenizer is returned by text methods of a model without a tokenizer.
var ErrNoTokenizer = errors.New("model has no usable tokenizer")

// Load opens the GGUF file at path and builds its model. When a backend was
// asked for (TOY_BACKEND=native, UseBackend) and cannot run, Load returns its
// NativeCallError instead of silently running elsewhere.
func Load(path string) (*Model, error) {
	if err := BackendError(); err != nil {
		return nil, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	m, err := build(path, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return m, nil
}

func build(path string, f *gguf.File) (*Model, error) {
	net, err := models.Load(f)
	if err != nil {
		return nil, err
	}
	arch, _ := f.Architecture()
	f.Prefetch()
	m := &Model{Path: path, Arch: arch, File: f, Net: net}
	m.Tokenizer, m.TokenizerErr = tokenizer.FromGGUF(f)
	if m.TokenizerErr == nil && m.Tokenizer.VocabSize() > net.VocabSize() {
		m.Tokenizer, m.TokenizerErr = nil, fmt.Errorf("tokenizer has %d tokens, the model %d", m.Tokenizer.VocabSize(), net.VocabSize())
	}
	return m, nil
}

// LoadImageClassifier opens the ViT image classifier in the GGUF file at
// path (architecture "vit"; toy convert makes one from a Hugging Face
// checkpoint). Classify it images with its Classify and ClassifyFile:
//
//	m, err := toy.LoadImageClassifier("vit-base-patch16-224.gguf")
//	if err != nil { … }
//	defer m.Close()
//	top, err := m.ClassifyFile("cat.png", 5) // []vit.Prediction, most probable first
func LoadImageClassifier(path string) (*vit.Model, error) {
	if err := BackendError(); err != nil {
		return nil, err
	}
	return vit.Open(path)
}

func (m *Model) tok() (*tokenizer.Tokenizer, error) {
	if m.Tokenizer == nil {
		return nil, fmt.Errorf("%w: %v", ErrNoTokenizer, m.TokenizerErr)
	}
	return m.Tokenizer, nil
}

// Encode turns text into token ids, adding BOS when the model asks for it
// (tokenizer.ggml.add_bos_token); special tokens in the text are not parsed.
func (m *Model) Encode(text string) ([]int32, error) {
	t, err := m.tok()
	if err != nil {
		return nil, err
	}
	return t.Encode(text, tokenizer.EncodeOptions{AddBOS: t.AddBOS()}), nil
}

// Decode turns token ids back into text.
func (m *Model) Decode(ids []int32) (string, error) {
	t, err := m.tok()
	if err != nil {
		return "", err
	}
	return t.Decode(ids), nil
}

// GenerateText continues prompt with up to opts.MaxTokens tokens, stopping
// early at an end-of-generation token, and returns the new text.
func (m *Model) GenerateText(prompt string, opts GenerateOptions) (string, error) {
	ids, err := m.Encode(prompt)
	if err != nil {
		return "", err
	}
	if opts.Stop == nil {
		opts.Stop = m.Tokenizer.IsEOG
	}
	out, err := m.Generate(ids, opts)
	if err != nil {
		return "", err
	}
	return m.Tokenizer.Decode(out), nil
}

// LoadDefault loads the model toy ships with (package defaultmodel): a small
// Llama-family model trained by toy on Go source. Its weights are read in
// place from the binary.
func LoadDefault() (*Model, error) {
	if err := BackendError(); err != nil {
		return nil, err
	}
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		return nil, fmt.Errorf("load the default model: %w", err)
	}
	return build(defaultmodel.Name, f)
}

// MustLoad is Load for one-liners: it panics on error.
func MustLoad(path string) *Model {
	m, err := Load(path)
	if err != nil {
		panic(err)
	}
	return m
}

// Close releases the model's file mapping; the model is unusable afterwards.
func (m *Model) Close() error { return m.File.Close() }

// VocabSize returns the number of tokens in the vocabulary.
func (m *Model) VocabSize() int { return m.Net.VocabSize() }

// ContextLength returns the model's trained context length.
func (m *Model) ContextLength() int { return m.Net.ContextLength() }

// String describes the model in one line.
func (m *Model) String() string {
	return fmt.Sprintf("%s model %s (vocabulary %d, context %d)", m.Arch, m.Path, m.VocabSize(), m.ContextLength())
}

// Forward runs ids from an empty context and returns the logits after every
// position, [T, V].
func (m *Model) Forward(ids []int32) (*tensor.Tensor, error) {
	return engine.NewSession(m.Net, len(ids)).All(ids)
}

// LogProbs runs ids [T] from an empty context and returns, for each token
// after the first, the log-probability the model gives it after the ones
// before: element t is log P(ids[t+1] | ids[0…t]), T−1 values. Their sum is
// the text's log-likelihood; toy eval's perplexity is exp of minus their
// mean.
func (m *Model) LogProbs(ids []int32) ([]float32, error) {
	if len(ids) < 2 {
		return nil, fmt.Errorf("%w: LogProbs needs at least 2 tokens, got %d", engine.ErrEmptyPrompt, len(ids))
	}
	logits, err := m.Forward(ids[:len(ids)-1]) // [T-1, V]
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(ids)-1)
	for t := range out {
		out[t] = float32(sample.LogProb(logits.Row(t), ids[t+1]))
	}
	return out, nil
}

// NewSession starts a sequence that can hold up to capacity positions.
func (m *Model) NewSession(capacity int) *engine.Session { return engine.NewSession(m.Net, capacity) }

// GenerateOptions configures Generate; the zero value generates nothing.
type GenerateOptions struct {
	MaxTokens  int
	Sample     sample.Params // zero value: greedy
	Stop       func(id int32) bool
	OnToken    func(id int32)
	Constraint sample.Constraint // see engine.Options
	// Draft, if set, is a smaller model over the same vocabulary that
	// guesses DraftTokens (default 8) tokens ahead for the model to check
	// in one pass: speculative decoding. The tokens are the same as
	// without it (see engine.Options.Draft); only the speed differs.
	Draft       *Model
	DraftTokens int
	// LogProbs asks GenerateContext for each generated token's
	// log-probability (engine.Result.LogProbs).
	LogProbs bool
}

// ErrDraftVocab is returned when a draft model's vocabulary is not the
// model's.
var ErrDraftVocab = errors.New("the draft model's vocabulary differs from the model's")

// CheckDraft checks that d can draft for m (speculative decoding): the
// same vocabulary size, and the same token texts when both have
// tokenizers; the error wraps ErrDraftVocab.
func (m *Model) CheckDraft(d *Model) error {
	if d.VocabSize() != m.VocabSize() {
		return fmt.Errorf("%w: %d tokens, the model has %d", ErrDraftVocab, d.VocabSize(), m.VocabSize())
	}
	if m.Tokenizer == nil || d.Tokenizer == nil {
		return nil
	}
	for id := range int32(m.VocabSize()) {
		if a, b := m.Tokenizer.Piece(id), d.Tokenizer.Piece(id); a != b {
			return fmt.Errorf("%w: token %d is %q in the model and %q in the draft", ErrDraftVocab, id, a, b)
		}
	}
	return nil
}

// NewSpeculator returns speculative decoding for session s of m: draft d
// (checked as GenerateOptions.Draft is), in a session as large as s,
// guesses k tokens a round (8 if k ≤ 0); see engine.Speculator. A server
// decoding token by token calls its Next instead of s.Next.
func (m *Model) NewSpeculator(s *engine.Session, d *Model, k int) (*engine.Speculator, error) {
	if err := m.CheckDraft(d); err != nil {
		return nil, err
	}
	return engine.NewSpeculator(s, d.NewSession(s.Capacity()), k)
}

// Generate continues prompt with up to opts.MaxTokens tokens and returns them.
func (m *Model) Generate(prompt []int32, opts GenerateOptions) ([]int32, error) {
	r, err := m.GenerateContext(context.Background(), prompt, opts)
	return r.IDs, err
}

// GenerateContext is Generate with cancellation, returning timings too.
func (m *Model) GenerateContext(ctx context.Context, prompt []int32, opts GenerateOptions) (engine.Result, error) {
	s := engine.NewSession(m.Net, len(prompt)+opts.MaxTokens)
	eo := engine.Options{
		MaxTokens: opts.MaxTokens, Sample: opts.Sample, Stop: opts.Stop, OnToken: opts.OnToken, Constraint: opts.Constraint,
		DraftTokens: opts.DraftTokens, LogProbs: opts.LogProbs,
	}
	if opts.Draft != nil {
		if err := m.CheckDraft(opts.Draft); err != nil {
			return engine.Result{}, err
		}
		eo.Draft = engine.NewSession(opts.Draft.Net, len(prompt)+opts.MaxTokens)
	}
	return engine.Generate(ctx, s, prompt, eo)
}
