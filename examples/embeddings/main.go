// Command embeddings shows text embeddings: each text becomes one vector
// (toy.Embedder), and texts are ranked by the cosine similarity of their
// vectors to a query's.
//
//	go run ./examples/embeddings
//
// A real embedding model (BERT, nomic-embed-text: toy.LoadEmbedder loads
// them) is trained so that similar meanings get similar vectors. toy-go, the
// default model, is a decoder trained on Go source; LoadEmbedder takes it too,
// using its final hidden state at the last token. It knows Go, not English,
// so the texts here are Go.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/defaultmodel"
)

func main() {
	// LoadEmbedder reads a file: write the default model's bytes to one.
	dir, err := os.MkdirTemp("", "toy-embed-")
	check(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "toy-go.gguf")
	check(os.WriteFile(path, defaultmodel.Bytes(), 0o644))

	e, err := toy.LoadEmbedder(path)
	check(err)
	defer e.Close()
	fmt.Printf("%s: %d-dimensional embeddings\n", e, e.Dim())

	query := "for i := 0; i < len(s); i++ {"
	docs := []string{
		"for j := 0; j < n; j++ {",
		"return nil, err",
		"import \"strings\"",
		"// Copyright 2009 The Go Authors. All rights reserved.",
		"for _, v := range values {",
	}

	// One vector per text, scaled to unit length (EmbedOptions' default).
	vecs, err := e.Embed(append([]string{query}, docs...), toy.EmbedOptions{})
	check(err)

	// Cosine similarity a·b / (‖a‖‖b‖): 1 for the same direction.
	type scored struct {
		doc string
		sim float64
	}
	var ranked []scored
	for i, doc := range docs {
		ranked = append(ranked, scored{doc, toy.Cosine(vecs[0], vecs[i+1])})
	}
	sort.Slice(ranked, func(i, j int) bool { return ranked[i].sim > ranked[j].sim })

	fmt.Printf("query: %q\n", query)
	for i, r := range ranked {
		fmt.Printf("%d. %.3f  %q\n", i+1, r.sim, r.doc)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
