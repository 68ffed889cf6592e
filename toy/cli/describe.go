// toy describe: a model's algorithm card.

package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toyml/toy/toy/card"
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
	c, path, err := describeModel(ref)
	if err != nil {
		return err
	}
	if flagBool(fs, "json") { // JSON escapes what it must; the text is the card's own
		return json.NewEncoder(stdout).Encode(describeOutput{Format: "toy/card-v1", Model: ref, Path: path, Card: c, Text: c.Render()})
	}
	_, err = fmt.Fprint(stdout, safeCard(c))
	return err
}

// safeCard renders c for a terminal: the strings that come from the file
// (the name, notes naming its tensors) may hold control characters — an
// escape sequence in general.name would drive the terminal — so they are
// written escaped, as Go writes them in a quoted string ("\x1b[2J").
func safeCard(c *card.Card) string {
	safe := *c
	safe.Name = escapeControls(c.Name, false) // one line, whatever it holds
	return escapeControls(safe.Render(), true)
}

// escapeControls writes the control characters of s (C0, DEL, C1, and the
// bidirectional overrides that reorder text on screen) as Go escapes,
// keeping newlines when keepNewlines is set.
func escapeControls(s string, keepNewlines bool) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case r == utf8.RuneError && size == 1: // not UTF-8: 0x9b alone is a terminal's CSI
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}
