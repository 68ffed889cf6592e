// toy list: the GGUF models on this machine.

package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
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
	ms := hub.List()
	if flagBool(fs, "json") {
		if ms == nil {
			ms = []hub.Model{}
		}
		return json.NewEncoder(stdout).Encode(listOutput{Format: "toy/list-v1", Models: ms})
	}
	if len(ms) == 0 {
		l := hub.DefaultLocations()
		fmt.Fprintf(stdout, "no GGUF models found in %s, %s, %s or %s\n",
			strings.Join(l.Dirs, ", "), l.HFCache, l.Ollama, strings.Join(l.LMStudio, ", "))
		fmt.Fprintln(stdout, `"toy fetch OWNER/REPO" downloads one from Hugging Face`)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tARCH\tPARAMS\tQUANT\tSIZE")
	for _, m := range ms {
		if m.Err != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t%s\tunreadable: %s\n", m.Name, m.Source, humanBytes(m.Size), oneLine(m.Err))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Source, m.Arch, card.HumanCount(m.Params), m.Quant, humanBytes(m.Size))
	}
	return tw.Flush()
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
