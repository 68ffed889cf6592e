// Text embeddings: one vector per text, from an encoder (BERT, nomic-bert)
// or from a decoder's final hidden states.

package toy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/bert"
	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tokenizer"
)

// Encoder is what an Embedder runs: a whole sequence of token ids [T] in,
// its final hidden states [T, D] out. *bert.Model is one; a decoder's
// normalised hidden states serve too.
type Encoder interface {
	Hidden(ids []int32) *tensor.Tensor
	VocabSize() int
	ContextLength() int
}

// Embedder is a loaded embedding model: the GGUF file, the network, its
// tokenizer and its pooling.
type Embedder struct {
	Path      string
	Arch      string
	File      *gguf.File
	Net       Encoder              // *bert.Model, or a decoder (llama, gemma, …) behind Encoder
	Tokenizer *tokenizer.Tokenizer // nil when the file carries none: only EmbedIDs works
	// Pooling is the file's ARCH.pooling_type ("none" for most decoders).
	Pooling bert.Pooling
}

// ErrNotEmbedding is returned by Embed for a reranker, and by Rank for a
// model that is not one.
var ErrNotEmbedding = errors.New("wrong kind of model")

// ErrTooLong is returned for an input with more tokens than the model's
// context, unless EmbedOptions.Truncate is set.
var ErrTooLong = errors.New("input longer than the model's context")

// EmbedOptions configures Embed; the zero value does what llama-embedding
// and Ollama's /api/embed do: the model's pooling, then unit length.
type EmbedOptions struct {
	// Pooling overrides the model's: "mean", "cls" or "last" ("" keeps it).
	// A model whose pooling is "none" is pooled by its last token, the
	// vector llama.cpp's embedding API (llama_get_embeddings_ith(-1))
	// returns for it.
	Pooling string
	// Normalize is "l2" (or ""): divide by the Euclidean length, as
	// llama-embedding (--embd-normalize 2, its default), llama-server's
	// /v1/embeddings and Ollama's /api/embed do; or "none": the pooled state
	// as the model computes it (Ollama's older /api/embeddings).
	Normalize string
	// Truncate cuts an input longer than the context to fit, keeping its
	// last token when the tokenizer adds one ([SEP]); otherwise it fails
	// with ErrTooLong.
	Truncate bool
}

// LoadEmbedder opens the GGUF file at path as an embedding model: an encoder
// (architecture bert or nomic-bert: all-MiniLM, bge, e5, gte,
// nomic-embed-text), or any decoder toy loads, whose final normalised hidden
// states are pooled (by its last token unless the file or EmbedOptions say
// otherwise).
//
//	e, err := toy.LoadEmbedder("all-MiniLM-L6-v2.F16.gguf")
//	if err != nil { … }
//	defer e.Close()
//	vs, err := e.Embed([]string{"a cat", "a kitten"}, toy.EmbedOptions{}) // unit vectors
//	fmt.Println(toy.Cosine(vs[0], vs[1]))
func LoadEmbedder(path string) (*Embedder, error) {
	if err := BackendError(); err != nil {
		return nil, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	e, err := buildEmbedder(path, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return e, nil
}

func buildEmbedder(path string, f *gguf.File) (*Embedder, error) {
	arch, err := f.Architecture()
	if err != nil {
		return nil, err
	}
	e := &Embedder{Path: path, Arch: arch, File: f}
	if slices.Contains(bert.Archs, arch) {
		m, err := bert.Load(f)
		if err != nil {
			return nil, err
		}
		e.Net, e.Pooling = m, m.Config.Pooling
	} else {
		net, err := models.Load(f)
		if err != nil {
			return nil, err
		}
		e.Net = decoder{net}
		if p, err := f.Int(arch + ".pooling_type"); err == nil {
			e.Pooling = bert.Pooling(p)
		}
	}
	e.Tokenizer, err = tokenizer.FromGGUF(f)
	if err == nil && e.Tokenizer.VocabSize() > e.Net.VocabSize() {
		err = fmt.Errorf("tokenizer has %d tokens, the model %d", e.Tokenizer.VocabSize(), e.Net.VocabSize())
	}
	if err != nil {
		e.Tokenizer = nil
	}
	return e, nil
}

// decoder is a language model seen as an Encoder: its final normalised
// hidden states over a whole sequence, no KV cache.
type decoder struct{ engine.Model }

func (d decoder) Hidden(ids []int32) *tensor.Tensor { return d.Model.Hidden(ids, nil) }

// Close releases the model's file mapping; the model is unusable afterwards.
func (e *Embedder) Close() error { return e.File.Close() }

// Dim returns the length of the embeddings, D: the width of the token
// embedding table.
func (e *Embedder) Dim() int {
	info, err := e.File.Info("token_embd.weight")
	if err != nil {
		return 0
	}
	return info.Shape()[1]
}

// String describes the model in one line.
func (e *Embedder) String() string {
	return fmt.Sprintf("%s embedding model %s (pooling %s, context %d)", e.Arch, e.Path, e.Pooling, e.Net.ContextLength())
}

// Encode turns text into the token ids the model embeds: [CLS] text [SEP]
// for WordPiece, BOS (and EOS) as a decoder's file asks for them; special
// tokens in the text are not parsed, as in llama.cpp's embedding API.
func (e *Embedder) Encode(text string) ([]int32, error) {
	if e.Tokenizer == nil {
		return nil, ErrNoTokenizer
	}
	t := e.Tokenizer
	return t.Encode(text, tokenizer.EncodeOptions{AddBOS: t.AddBOS(), AddEOS: t.AddEOS()}), nil
}

// Embed returns one embedding per text, in order.
func (e *Embedder) Embed(texts []string, opts EmbedOptions) ([][]float32, error) {
	inputs := make([][]int32, len(texts))
	for i, s := range texts {
		ids, err := e.Encode(s)
		if err != nil {
			return nil, err
		}
		inputs[i] = ids
	}
	return e.EmbedIDs(inputs, opts)
}

// EmbedIDs returns one embedding per sequence of token ids, taken as they
// are (Encode adds [CLS] and [SEP]); each sequence runs on its own.
func (e *Embedder) EmbedIDs(inputs [][]int32, opts EmbedOptions) ([][]float32, error) {
	pool := e.Pooling
	if opts.Pooling != "" {
		p, err := bert.ParsePooling(opts.Pooling)
		if err != nil || p == bert.PoolNone || p == bert.PoolRank {
			return nil, fmt.Errorf("embed: pooling %q: want mean, cls or last", opts.Pooling)
		}
		pool = p
	}
	switch pool {
	case bert.PoolNone:
		pool = bert.PoolLast
	case bert.PoolRank:
		return nil, fmt.Errorf("embed: %w: the model is a reranker (rank pooling): use Rank", ErrNotEmbedding)
	}
	if opts.Normalize != "" && opts.Normalize != "l2" && opts.Normalize != "none" {
		return nil, fmt.Errorf("embed: normalize %q: want l2 or none", opts.Normalize)
	}
	out := make([][]float32, len(inputs))
	for i, ids := range inputs {
		ids, err := e.check(ids, opts.Truncate)
		if err != nil {
			return nil, fmt.Errorf("embed input %d: %w", i, err)
		}
		v := bert.Pool(e.Net.Hidden(ids), pool)
		if opts.Normalize != "none" {
			v = Normalize(v)
		}
		out[i] = v
	}
	return out, nil
}

// Reranker reports whether e is a reranker: an encoder with rank pooling
// (bge-reranker, ms-marco cross-encoders), whose Rank scores how well a
// document answers a query.
func (e *Embedder) Reranker() bool {
	_, ok := e.Net.(*bert.Model)
	return ok && e.Pooling == bert.PoolRank
}

// RankInput is the token ids a reranker reads for query and doc, laid out
// as llama.cpp's server lays them out: the file's rerank template
// (tokenizer.chat_template.rerank) with {query} and {document} replaced
// and special tokens parsed; otherwise
//
//	[BOS] query [EOS] [SEP] doc [EOS]
//
// each special token present as the file's add_bos_token, add_eos_token
// and add_sep_token say, with llama.cpp's defaults (WordPiece: BOS [CLS]
// and SEP [SEP] added, EOS, which is [SEP] unless the file names another,
// not). (Every token's type is 0, as in llama.cpp, where Hugging Face
// gives the document type 1.)
func (e *Embedder) RankInput(query, doc string) ([]int32, error) {
	t := e.Tokenizer
	if t == nil {
		return nil, ErrNoTokenizer
	}
	if tmpl, err := e.File.String("tokenizer.chat_template.rerank"); err == nil {
		text := strings.ReplaceAll(strings.ReplaceAll(tmpl, "{query}", query), "{document}", doc)
		return t.Encode(text, tokenizer.EncodeOptions{ParseSpecial: true}), nil
	}
	l := e.rankLayout()
	var ids []int32
	add := func(ok bool, id int32) {
		if ok && id >= 0 {
			ids = append(ids, id)
		}
	}
	add(l.addBOS, l.bos)
	ids = append(ids, t.Encode(query, tokenizer.EncodeOptions{})...)
	add(l.addEOS, l.eos)
	add(l.addSep, l.sep)
	ids = append(ids, t.Encode(doc, tokenizer.EncodeOptions{})...)
	add(l.addEOS, l.eos)
	return ids, nil
}

// rankLayout is what llama.cpp's vocabulary says of the special tokens
// around a reranker's query and document.
type rankLayout struct {
	bos, eos, sep          int32 // −1: none
	addBOS, addEOS, addSep bool
}

func (e *Embedder) rankLayout() rankLayout {
	t, f := e.Tokenizer, e.File
	const p = "tokenizer.ggml."
	id := func(key string, def int32) int32 {
		if v, err := f.Int(p + key); err == nil && v >= 0 && v < t.VocabSize() {
			return int32(v)
		}
		return def
	}
	flag := func(key string, def bool) bool {
		if v, err := f.Bool(p + key); err == nil {
			return v
		}
		return def
	}
	l := rankLayout{bos: t.BOS(), eos: -1, sep: -1, addBOS: t.AddBOS(), addEOS: t.AddEOS()}
	pre, _ := f.String(p + "pre")
	addSep := pre == "jina-v1-en" || pre == "jina-v2-code" || pre == "roberta-bpe"
	if t.Model() == "bert" { // llama.cpp's WordPiece defaults: [SEP] 102, no EOS
		l.sep = id("seperator_token_id", 102)
		l.addBOS, l.addEOS, addSep = flag("add_bos_token", true), flag("add_eos_token", false), true
	} else {
		l.sep = id("seperator_token_id", -1)
		l.eos = t.EOS()
	}
	l.eos = id("eos_token_id", l.eos)
	if l.eos < 0 {
		l.eos = l.sep // llama.cpp's server: SEP stands in for a missing EOS
	}
	l.addSep = flag("add_sep_token", addSep)
	return l
}

// Rank returns each document's relevance to query: the reranker's score,
// a logit (σ(s) = 1/(1+e^−s) is the probability that the document is
// relevant), as llama.cpp's server's /rerank returns it. Only
// opts.Truncate applies.
func (e *Embedder) Rank(query string, docs []string, opts EmbedOptions) ([]float32, error) {
	inputs := make([][]int32, len(docs))
	for i, d := range docs {
		ids, err := e.RankInput(query, d)
		if err != nil {
			return nil, err
		}
		inputs[i] = ids
	}
	return e.RankIDs(inputs, opts)
}

// RankIDs scores inputs laid out as RankInput makes them, each on its
// own: the first value of the classification head's outputs
// (bert.Model.Scores).
func (e *Embedder) RankIDs(inputs [][]int32, opts EmbedOptions) ([]float32, error) {
	m, ok := e.Net.(*bert.Model)
	if !ok || e.Pooling != bert.PoolRank {
		return nil, fmt.Errorf("rank: %w: the model is no reranker (its pooling is %s)", ErrNotEmbedding, e.Pooling)
	}
	out := make([]float32, len(inputs))
	for i, ids := range inputs {
		ids, err := e.check(ids, opts.Truncate)
		if err != nil {
			return nil, fmt.Errorf("rank input %d: %w", i, err)
		}
		out[i] = m.Scores(ids)[0]
	}
	return out, nil
}

// check validates one input's ids and truncates them if asked.
func (e *Embedder) check(ids []int32, truncate bool) ([]int32, error) {
	if len(ids) == 0 {
		return nil, engine.ErrEmptyPrompt
	}
	V, n := e.Net.VocabSize(), e.Net.ContextLength()
	for _, id := range ids {
		if id < 0 || int(id) >= V {
			return nil, fmt.Errorf("%w: %d (vocabulary has %d tokens)", engine.ErrTokenRange, id, V)
		}
	}
	if len(ids) <= n {
		return ids, nil
	}
	if !truncate {
		return nil, fmt.Errorf("%w: %d tokens, the context holds %d", ErrTooLong, len(ids), n)
	}
	last := ids[len(ids)-1]
	ids = slices.Clone(ids[:n])
	if t := e.Tokenizer; t != nil && t.AddEOS() && last == t.EOS() {
		ids[n-1] = last // keep [SEP]
	}
	return ids, nil
}

// Normalize returns v scaled to unit Euclidean length, v/‖v‖₂ (a zero
// vector stays zero), as llama.cpp's common_embd_normalize with norm 2.
func Normalize(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Cosine returns the cosine similarity of a and b, a·b / (‖a‖‖b‖): 1 for
// the same direction, 0 for orthogonal vectors (and for a zero vector).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("toy.Cosine: vectors of %d and %d values", len(a), len(b)))
	}
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
