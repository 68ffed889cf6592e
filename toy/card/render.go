// Rendering a card as text, and reading the text back.

package card

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Render prints the card as Phuong–Hutter pseudocode. The text is stable
// (the same card renders the same bytes), and ParseCard reads it back.
//
//	Algorithm: P ← DTransformer(x | θ)  [llama]
//	Model: SmolLM2 135M
//	Size: 134515008 parameters (134.5M), quantization Q8_0
//	…
//	Hyperparameters:
//	  N_V      = 49152      vocab_size       vocabulary size
//	…
//	   4:   X̃ ← RMSNorm(X | γ¹_l)                              ▷ d_e × ℓ
func (c *Card) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Algorithm: P ← %s(x | θ)  [%s]\n", c.Title, c.Arch)
	if c.Name != "" {
		fmt.Fprintf(&b, "Model: %s\n", c.Name)
	}
	fmt.Fprintf(&b, "Size: %d parameters (%s)", c.ParamCount, HumanCount(c.ParamCount))
	if c.Quant != "" {
		fmt.Fprintf(&b, ", quantization %s", c.Quant)
	}
	b.WriteString("\n")
	if c.Summary != "" {
		fmt.Fprintf(&b, "About: %s\n", c.Summary)
	}
	for _, s := range c.Inputs {
		fmt.Fprintf(&b, "Input: %s\n", s)
	}
	for _, s := range c.Outputs {
		fmt.Fprintf(&b, "Output: %s\n", s)
	}
	b.WriteString("Hyperparameters:\n")
	for _, h := range c.Hyper {
		fmt.Fprintf(&b, "  %s = %s %s %s\n", pad(h.Symbol, 8), pad(h.Value, 10), pad(h.Key, 16), h.Meaning)
	}
	b.WriteString("Parameters θ:\n")
	inLayer := false
	for _, p := range c.Params {
		indent := "  "
		if p.PerLayer {
			if !inLayer {
				b.WriteString("  for l ∈ [L]:\n")
				inLayer = true
			}
			indent = "    "
		} else {
			inLayer = false
		}
		fmt.Fprintf(&b, "%s%s %s\n", indent, pad(p.Symbol+" ∈ ℝ^{"+p.Shape+"}", 30), p.Meaning)
	}
	if len(c.Notes) > 0 {
		b.WriteString("Notes:\n")
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	b.WriteString("Steps:\n")
	for i, s := range c.Steps {
		line := fmt.Sprintf("%3d: %s%s", i+1, strings.Repeat("  ", s.Depth), s.Text)
		if s.Shape != "" {
			line = pad(line, 62) + " ▷ " + s.Shape
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// pad right-pads s with spaces to n characters (runes), keeping one space at least.
func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

// ParseCard reads the header lines and hyperparameters of a rendered card:
// architecture, name, size, quantization, and every hyperparameter. The
// parameters and steps follow from those and are not read back.
func ParseCard(text string) (*Card, error) {
	c := &Card{}
	section := ""
	for n, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			section = ""
		}
		switch {
		case strings.HasPrefix(line, "Algorithm: "):
			i, j := strings.LastIndex(line, "["), strings.LastIndex(line, "]")
			if i < 0 || j < i {
				return nil, fmt.Errorf("%w: line %d: no [architecture] in %q", ErrSyntax, n+1, line)
			}
			c.Arch = line[i+1 : j]
			if k := strings.Index(line, "← "); k >= 0 {
				if e := strings.Index(line[k:], "("); e >= 0 {
					c.Title = strings.TrimSpace(line[k+len("← ") : k+e])
				}
			}
		case strings.HasPrefix(line, "Model: "):
			c.Name = strings.TrimPrefix(line, "Model: ")
		case strings.HasPrefix(line, "Size: "):
			f := strings.Fields(line)
			if len(f) < 3 {
				return nil, fmt.Errorf("%w: line %d: %q", ErrSyntax, n+1, line)
			}
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d: parameter count %q", ErrSyntax, n+1, f[1])
			}
			c.ParamCount = v
			if i := strings.Index(line, "quantization "); i >= 0 {
				c.Quant = strings.TrimSpace(line[i+len("quantization "):])
			}
		case strings.HasPrefix(line, "About: "):
			c.Summary = strings.TrimPrefix(line, "About: ")
		case line == "Hyperparameters:":
			section = "hyper"
		case section == "hyper":
			f := strings.Fields(line)
			if len(f) < 4 || f[1] != "=" {
				return nil, fmt.Errorf("%w: line %d: want \"SYMBOL = VALUE KEY MEANING\", got %q", ErrSyntax, n+1, strings.TrimSpace(line))
			}
			c.Hyper = append(c.Hyper, Hyper{Symbol: f[0], Value: f[2], Key: f[3], Meaning: strings.Join(f[4:], " ")})
		}
	}
	if c.Arch == "" {
		return nil, fmt.Errorf("%w: no \"Algorithm: … [architecture]\" line", ErrSyntax)
	}
	if len(c.Hyper) == 0 {
		return nil, fmt.Errorf("%w: no hyperparameters", ErrSyntax)
	}
	return c, nil
}
