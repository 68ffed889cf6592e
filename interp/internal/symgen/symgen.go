// Package symgen generates package interp's symbol tables with yaegi's
// extractor, and the doc-comment table behind :doc and inspect. It is shared
// by the go:generate command and by the test that fails when the committed
// tables are stale.
package symgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/traefik/yaegi/extract"
)

// ToyPackages are toy's public packages a script can import, besides the
// architectures (ModelPackages).
var ToyPackages = []string{
	"github.com/toyml/toy/toy/models",
	"github.com/toyml/toy/toy",
	"github.com/toyml/toy/toy/tensor",
	"github.com/toyml/toy/toy/tensor/quant",
	"github.com/toyml/toy/toy/sample",
	"github.com/toyml/toy/toy/grammar",
	"github.com/toyml/toy/toy/engine",
	"github.com/toyml/toy/toy/gguf",
	"github.com/toyml/toy/toy/nn",
	"github.com/toyml/toy/toy/tokenizer",
	"github.com/toyml/toy/toy/chat",
	"github.com/toyml/toy/toy/display",
	"github.com/toyml/toy/toy/pixels",
	"github.com/toyml/toy/toy/optim",
	"github.com/toyml/toy/toy/recipes",
	"github.com/toyml/toy/toy/runlog",
	"github.com/toyml/toy/toy/card",
	"github.com/toyml/toy/toy/defaultmodel",
	"github.com/toyml/toy/kernels",
}

// Overlay are standard packages re-extracted with the running Go, so scripts
// see the APIs added after Go 1.22 (yaegi v0.16.1's tables stop there).
// fmt, os, log and flag are left alone: yaegi rewires their stdio symbols.
var Overlay = []string{
	"bytes",
	"errors",
	"math",
	"math/rand/v2",
	"strconv",
	"strings",
	"time",
	"unicode/utf8",
}

// Generate writes zsym_*.go and zdocs.go into dir.
func Generate(dir string) error {
	files, err := Files()
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ModelPackages returns the architecture packages under toy/models (all of
// them but "all", which only imports them, and "internal"): found in the tree,
// so that no list here names an architecture.
func ModelPackages() ([]string, error) {
	const root = "github.com/toyml/toy/toy/models"
	bp, err := build.Import(root, ".", build.FindOnly)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(bp.Dir)
	if err != nil {
		return nil, err
	}
	var pkgs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "all" && e.Name() != "internal" && e.Name() != "testdata" {
			pkgs = append(pkgs, root+"/"+e.Name())
		}
	}
	return pkgs, nil
}

// Files returns the generated files by name.
func Files() (map[string][]byte, error) {
	files := map[string][]byte{}
	ext := extract.Extractor{Dest: "interp"}
	archs, err := ModelPackages()
	if err != nil {
		return nil, err
	}
	pkgs := append(append([]string{}, ToyPackages...), archs...)
	for _, p := range append(append([]string{}, pkgs...), Overlay...) {
		var b bytes.Buffer
		if _, err := ext.Extract(p, "", &b); err != nil {
			return nil, fmt.Errorf("extract %s: %w", p, err)
		}
		name := "zsym_" + strings.NewReplacer("github.com/toyml/toy/", "", "/", "_", ".", "_").Replace(p) + ".go"
		files[name] = b.Bytes()
	}
	d, err := docs(pkgs)
	if err != nil {
		return nil, err
	}
	files["zdocs.go"] = d
	return files, nil
}

// docs renders the doc comments of pkgs as a Go map from "pkg.Name" (and
// "pkg.Type.Method") to the declaration and its comment.
func docs(pkgs []string) ([]byte, error) {
	m := map[string]string{}
	for _, path := range pkgs {
		bp, err := build.Import(path, ".", 0)
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, f := range bp.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(bp.Dir, f), nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			files = append(files, af)
		}
		p, err := doc.NewFromFiles(fset, files, path)
		if err != nil {
			return nil, err
		}
		name := p.Name
		m[name] = "package " + name + ` // import "` + path + `"` + "\n\n" + strings.TrimSpace(p.Doc)
		decl := func(n ast.Node) string {
			var b bytes.Buffer
			if fd, ok := n.(*ast.FuncDecl); ok {
				fd = &ast.FuncDecl{Recv: fd.Recv, Name: fd.Name, Type: fd.Type}
				n = fd
			}
			format.Node(&b, fset, n)
			return b.String()
		}
		entry := func(key string, n ast.Node, text string) {
			m[key] = strings.TrimSpace(decl(n) + "\n\n" + strings.TrimSpace(text))
		}
		for _, f := range p.Funcs {
			entry(name+"."+f.Name, f.Decl, f.Doc)
		}
		for _, v := range append(p.Consts, p.Vars...) {
			for _, n := range v.Names {
				entry(name+"."+n, v.Decl, v.Doc)
			}
		}
		for _, t := range p.Types {
			entry(name+"."+t.Name, t.Decl, t.Doc)
			for _, f := range t.Funcs {
				entry(name+"."+f.Name, f.Decl, f.Doc)
			}
			for _, f := range t.Methods {
				entry(name+"."+t.Name+"."+f.Name, f.Decl, f.Doc)
			}
			for _, v := range append(t.Consts, t.Vars...) {
				for _, n := range v.Names {
					entry(name+"."+n, v.Decl, v.Doc)
				}
			}
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("// Code generated by interp/internal/gensyms. DO NOT EDIT.\n\npackage interp\n\n")
	b.WriteString("// docs maps \"pkg.Name\" and \"pkg.Type.Method\" to the declaration and its doc comment.\nvar docs = map[string]string{\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%q: %q,\n", k, m[k])
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
