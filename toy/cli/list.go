// toy list: the GGUF models on this machine.

package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/hub"
)

func listFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.Bool("json", false, `print JSON: {"format":"toy/list-v1","models":[…]}`)
	return fs
}

type listOutput struct {
	Format string      `json:"format"`
	Models []hub.Model `json:"models"`
}

func runList(args []string, stdout io.Writer) error {
	fs := listFlags()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("%w: toy list takes no arguments, got %q", errUsage, strings.Join(pos, " "))
	}
	found := hub.List()
	ms := append([]hub.Model{builtinModel()}, runModels(found)...)
	ms = append(ms, found...)
	if flagBool(fs, "json") {
		return json.NewEncoder(stdout).Encode(listOutput{Format: "toy/list-v1", Models: ms})
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tARCH\tPARAMS\tQUANT\tSIZE")
	for _, m := range ms {
		// Names and architectures come from files and their headers: no
		// control character reaches the terminal (describe.go).
		name, arch, quant := escapeControls(m.Name, false), escapeControls(m.Arch, false), escapeControls(m.Quant, false)
		if m.Err != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t%s\tunreadable: %s\n", name, m.Source, humanBytes(m.Size), escapeControls(oneLine(m.Err), false))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, m.Source, arch, card.HumanCount(m.Params), quant, humanBytes(m.Size))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(ms) == 1 { // only the built-in model
		l := hub.DefaultLocations()
		fmt.Fprintf(stdout, "\nno GGUF files found in runs/*/, %s, %s, %s or %s\n",
			strings.Join(l.Dirs, ", "), l.HFCache, l.Ollama, strings.Join(l.LMStudio, ", "))
		fmt.Fprintln(stdout, `"toy fetch OWNER/REPO" downloads one from Hugging Face; "toy train" makes one in runs/`)
	}
	return nil
}

// sourceRun is the source of toy list's rows for the models training runs
// wrote in this directory (runs/ID/model.gguf).
const sourceRun = "run"

// runModels lists the runs/*/model.gguf files of the working directory
// (what toy train writes by default), leaving out those already found.
func runModels(found []hub.Model) []hub.Model {
	paths, _ := filepath.Glob(filepath.Join("runs", "*", "model.gguf"))
	seen := map[string]bool{}
	for _, m := range found {
		if abs, err := filepath.Abs(m.Path); err == nil {
			seen[abs] = true
		}
	}
	var out []hub.Model
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil && seen[abs] {
			continue
		}
		m := hub.Model{Name: filepath.ToSlash(p), Source: sourceRun, Path: p}
		if st, err := os.Stat(p); err != nil {
			m.Err = err.Error()
		} else {
			m.Size = st.Size()
			m.Inspect()
		}
		out = append(out, m)
	}
	return out
}

// humanBytes writes a size briefly: 1.2 GB, 350 MB, 12 KB.
func humanBytes(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func flagBool(fs *flag.FlagSet, name string) bool {
	return fs.Lookup(name).Value.(flag.Getter).Get().(bool)
}

func flagString(fs *flag.FlagSet, name string) string { return fs.Lookup(name).Value.String() }
