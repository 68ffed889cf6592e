// toy rerank: how well each document answers a query, by a reranker
// (bge-reranker, ms-marco cross-encoders: BERT with rank pooling).

package cli

import (
	"flag"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/toyml/toy/toy"
)

const rerankUsage = "toy rerank MODEL --query TEXT DOCUMENT… [--file FILE] [--truncate] [--device cpu|cuda] [--json]"

type rerankFlags struct {
	query, file, device string
	truncate, asJSON    bool
}

func rerankFlagSet() (*flag.FlagSet, *rerankFlags) {
	f := &rerankFlags{}
	fs := flag.NewFlagSet("rerank", flag.ContinueOnError)
	fs.StringVar(&f.query, "query", "", "the query the documents are ranked against")
	fs.StringVar(&f.file, "file", "", "read the documents from FILE, one per line (- for stdin), after any given as arguments")
	fs.BoolVar(&f.truncate, "truncate", false, "cut a query and document longer than the model's context instead of failing")
	fs.BoolVar(&f.asJSON, "json", false, `print JSON: {"format":"toy/rerank-v1","model","query","results":[{"index","document","tokens","score","probability"}…]}, best first`)
	deviceFlag(fs, &f.device)
	return fs, f
}

func rerankFlagsDoc() *flag.FlagSet { fs, _ := rerankFlagSet(); return fs }

type rerankResult struct {
	Index       int     `json:"index"`
	Document    string  `json:"document"`
	Tokens      int     `json:"tokens"` // the query and document together, after --truncate
	Score       float32 `json:"score"`  // the reranker's logit, as llama.cpp's /rerank gives it
	Probability float64 `json:"probability"`
}

type rerankOutput struct {
	Format  string         `json:"format"`
	Model   string         `json:"model"`
	Query   string         `json:"query"`
	Results []rerankResult `json:"results"`
}

// runRerank scores each document against the query and prints them best
// first: the score (a logit), its probability σ(score), and the document.
func runRerank(args []string, stdout io.Writer) error {
	fs, f := rerankFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) == 0 || f.query == "" {
		return fmt.Errorf("%w: %s", errUsage, rerankUsage)
	}
	docs, err := withLines(pos[1:], f.file)
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		return fmt.Errorf("%w: no document to rank: %s", errUsage, rerankUsage)
	}
	if err := useDevice(f.device); err != nil {
		return err
	}
	e, err := loadEmbedder(pos[0])
	if err != nil {
		return err
	}
	defer e.Close()
	if !e.Reranker() {
		return fmt.Errorf("%s is no reranker (its pooling is %s, not rank): toy embed embeds with it", pos[0], e.Pooling)
	}
	inputs := make([][]int32, len(docs))
	for i, d := range docs {
		if inputs[i], err = e.RankInput(f.query, d); err != nil {
			return err
		}
	}
	scores, err := e.RankIDs(inputs, toy.EmbedOptions{Truncate: f.truncate})
	if err != nil {
		return err
	}
	out := rerankOutput{Format: "toy/rerank-v1", Model: pos[0], Query: f.query}
	for i, s := range scores {
		out.Results = append(out.Results, rerankResult{Index: i, Document: docs[i], Tokens: min(len(inputs[i]), e.Net.ContextLength()),
			Score: s, Probability: 1 / (1 + math.Exp(-float64(s)))})
	}
	sort.SliceStable(out.Results, func(a, b int) bool { return out.Results[a].Score > out.Results[b].Score })
	if f.asJSON {
		return encodeJSON(stdout, out)
	}
	for _, r := range out.Results {
		fmt.Fprintf(stdout, "%9.4f  %.4f  [%d] %s\n", r.Score, r.Probability, r.Index, r.Document)
	}
	return nil
}
