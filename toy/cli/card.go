// toy card: read an algorithm card back.

package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/toyml/toy/toy/card"
)

func cardFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("card", flag.ContinueOnError)
	fs.Bool("json", false, "parse: print the Config as JSON (toy/config-v1)")
	return fs
}

// runCard is "toy card code FILE" (the Go that constructs the card's Config)
// and "toy card parse FILE" (the Config). FILE is a card that toy describe
// printed, "-" for standard input, or a model, which is described first.
func runCard(args []string, stdout io.Writer) error {
	fs := cardFlags()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 || (pos[0] != "code" && pos[0] != "parse") {
		return fmt.Errorf("%w: want \"toy card code FILE\" or \"toy card parse FILE\"", errUsage)
	}
	text, err := readCard(pos[1])
	if err != nil {
		return err
	}
	cfg, err := card.Parse(text)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[1], err)
	}
	if pos[0] == "parse" {
		if flagBool(fs, "json") {
			c, _ := card.ParseCard(text)
			return json.NewEncoder(stdout).Encode(struct {
				Format string `json:"format"`
				Arch   string `json:"arch"`
				Config any    `json:"config"`
			}{"toy/config-v1", c.Arch, cfg})
		}
		_, err = fmt.Fprintf(stdout, "%#v\n", cfg)
		return err
	}
	code, err := card.Code(cfg)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, code)
	return err
}

// readCard returns the card text in file: the file itself, standard input
// for "-", or the rendered card of a GGUF model.
func readCard(file string) (string, error) {
	if file == "-" {
		b, err := io.ReadAll(os.Stdin)
		return string(b), err
	}
	if f, err := os.Open(file); err == nil {
		var magic [4]byte
		n, _ := io.ReadFull(f, magic[:])
		f.Close()
		if string(magic[:n]) != "GGUF" {
			b, err := os.ReadFile(file)
			return string(b), err
		}
	}
	c, _, err := describeModel(file)
	if err != nil {
		return "", err
	}
	return c.Render(), nil
}
