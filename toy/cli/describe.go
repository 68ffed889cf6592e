// toy describe: a model's algorithm card.

package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/hub"
)

func describeFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("describe", flag.ContinueOnError)
	fs.Bool("json", false, "print the card as JSON (toy/card-v1), with the rendered text")
	return fs
}

type describeOutput struct {
	Format string `json:"format"`
	Model  string `json:"model"`
	Path   string `json:"path"`
	*card.Card
	Text string `json:"text"`
}

func runDescribe(args []string, stdout io.Writer) error {
	fs := describeFlags()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	ref, err := oneModel(pos)
	if err != nil {
		return err
	}
	path, err := hub.Resolve(ref)
	if err != nil {
		return err
	}
	c, err := card.Describe(path)
	if err != nil {
		return err
	}
	text := c.Render()
	if flagBool(fs, "json") {
		return json.NewEncoder(stdout).Encode(describeOutput{Format: "toy/card-v1", Model: ref, Path: path, Card: c, Text: text})
	}
	_, err = fmt.Fprint(stdout, text)
	return err
}
