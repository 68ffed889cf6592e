// Command genmodels writes the tiny random-weight GGUF models of the
// reference gates (or, with -bench, the SmolLM2-135M-shaped benchmark models)
// and a manifest.json listing them with their prompts and SHA-256.
//
//	go run ./tests/reference/genmodels -out tests/reference/models
//	go run ./tests/reference/genmodels -bench -out /tmp/bench
//	go run ./tests/reference/genmodels -bench-qwen35 -out /tmp/bench
//	go run ./tests/reference/genmodels -embed -out tests/reference/models/embed
//	go run ./tests/reference/genmodels -rank -out tests/reference/models/rank
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toyml/toy/internal/testadapter"
	"github.com/toyml/toy/internal/testmodel"
)

type entry struct {
	testmodel.Spec
	File   string `json:"file"`
	DType  string `json:"dtype"`
	SHA256 string `json:"sha256"`
}

type adapterEntry struct {
	testadapter.LoRASpec
	File      string  `json:"file"`
	BaseFile  string  `json:"base_file"`
	PromptIDs []int32 `json:"prompt_ids"`
	SHA256    string  `json:"sha256"`
}

func main() {
	out := flag.String("out", "tests/reference/models", "output directory")
	bench := flag.Bool("bench", false, "write the SmolLM2-135M-shaped benchmark models instead")
	benchQwen35 := flag.Bool("bench-qwen35", false, "write the Qwen3.5-0.8B-shaped benchmark model instead")
	embed := flag.Bool("embed", false, "write the embedding models (BERT, nomic-bert) of embed.mjs instead")
	rank := flag.Bool("rank", false, "write the reranker models (BERT cross-encoders) of rank.mjs instead")
	flag.Parse()
	specs := append(testmodel.Specs(), testmodel.LongSpecs()...)
	if *bench {
		specs = testmodel.BenchSpecs()
	}
	if *benchQwen35 {
		specs = testmodel.BenchQwen35Specs()
	}
	if *embed {
		specs = testmodel.EmbedSpecs()
	}
	if *rank {
		specs = testmodel.RankSpecs()
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	var manifest struct {
		Models   []entry        `json:"models"`
		Adapters []adapterEntry `json:"adapters,omitempty"`
	}
	for _, s := range specs {
		path := filepath.Join(*out, s.File())
		sum, err := testmodel.Write(s, path)
		if err != nil {
			fail(err)
		}
		manifest.Models = append(manifest.Models, entry{Spec: s, File: s.File(), DType: s.DType.String(), SHA256: sum})
		fmt.Fprintf(os.Stderr, "%s  %s\n", sum, path)
	}
	if !*bench && !*benchQwen35 && !*embed && !*rank {
		byName := map[string]testmodel.Spec{}
		for _, s := range specs {
			byName[s.Name] = s
		}
		for _, l := range testadapter.LoRASpecs() {
			base := byName[l.Base]
			path := filepath.Join(*out, l.File())
			if err := testadapter.WriteLoRA(l, filepath.Join(*out, base.File()), path, base.PromptIDs); err != nil {
				fail(err)
			}
			sum, err := testmodel.FileSHA256(path)
			if err != nil {
				fail(err)
			}
			manifest.Adapters = append(manifest.Adapters, adapterEntry{LoRASpec: l, File: l.File(), BaseFile: base.File(),
				PromptIDs: base.PromptIDs, SHA256: sum})
			fmt.Fprintf(os.Stderr, "%s  %s\n", sum, path)
		}
	}
	b, _ := json.MarshalIndent(manifest, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "manifest.json"), append(b, '\n'), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genmodels:", err)
	os.Exit(1)
}
