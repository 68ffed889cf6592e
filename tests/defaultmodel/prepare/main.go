// Command prepare makes the corpus and the tokenizer of toy's default model:
// the Go standard library's own source (BSD-licensed, see $GOROOT/LICENSE)
// from the packages listed below, concatenated in a fixed order, and a
// 2048-token byte-level BPE vocabulary learned from it.
//
//	go run ./tests/defaultmodel/prepare -out /tmp/toy-default
//
// writes /tmp/toy-default/corpus.txt and /tmp/toy-default/tokenizer.gguf.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tokenizer"
)

// packages whose non-test .go files make the corpus.
var packages = []string{
	"bufio", "bytes", "container/heap", "container/list", "container/ring", "encoding/base64", "encoding/binary",
	"encoding/csv", "encoding/hex", "encoding/json", "errors", "flag", "fmt", "hash/crc32", "html", "io", "io/fs",
	"log", "math", "math/big", "math/bits", "math/rand", "net/url", "os", "path", "path/filepath", "regexp",
	"regexp/syntax", "sort", "strconv", "strings", "sync", "text/scanner", "text/tabwriter", "text/template",
	"text/template/parse", "time", "unicode", "unicode/utf16", "unicode/utf8", "archive/tar", "archive/zip",
	"compress/flate", "compress/gzip", "crypto/sha256", "database/sql", "go/ast", "go/parser", "go/scanner",
	"go/token", "go/printer", "go/format", "image", "image/color", "image/png", "mime", "net/http/httptest",
	"os/exec", "slices", "maps", "iter", "context", "embed", "expvar", "index/suffixarray", "testing",
}

func main() {
	out := flag.String("out", "/tmp/toy-default", "output directory")
	vocab := flag.Int("vocab", 2048, "vocabulary size")
	flag.Parse()
	var sb strings.Builder
	files := 0
	for _, pkg := range packages {
		dir := filepath.Join(runtime.GOROOT(), "src", pkg)
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		sort.Strings(names)
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			b, err := os.ReadFile(n)
			if err != nil {
				fail(err)
			}
			sb.Write(b)
			sb.WriteString("\n")
			files++
		}
	}
	corpus := sb.String()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "corpus.txt"), []byte(corpus), 0o644); err != nil {
		fail(err)
	}
	v, err := tokenizer.TrainBPE(corpus, *vocab, "gpt-2")
	if err != nil {
		fail(err)
	}
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetString("general.name", "toy default tokenizer (Go source BPE)")
	v.SetMetadata(w)
	if err := w.WriteFile(filepath.Join(*out, "tokenizer.gguf")); err != nil {
		fail(err)
	}
	fmt.Printf("%d files, %d bytes of Go from %s; %d tokens\n", files, len(corpus), runtime.Version(), len(v.Tokens))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "prepare:", err)
	os.Exit(1)
}
