// Package builtin makes the models.Family of one of toy's own architecture
// packages from its typed functions, so that each package registers itself
// in one statement. (Generic, and so internal: the interpreter cannot
// instantiate generic code, and a user's family is a plain models.Family.)
package builtin

import (
	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// Config is what every toy package's configuration can do.
type Config interface{ Validate() error }

// Family returns the family that loads with load, builds fresh models of a
// validated C with newRandom, and writes cards with fromHeader, read back by
// fromCard (nil: the card's declared hyperparameters into a zero C, see
// card.FromCard). Arch is names[0]; the other names are aliases.
func Family[C Config, M models.Model](names []string, load func(*gguf.File) (M, error), newRandom func(C, uint64) M,
	fromHeader func(*gguf.File) (*card.Card, error), fromCard func(*card.Card) (any, error)) models.Family {
	var zero C
	if fromCard == nil {
		fromCard = func(k *card.Card) (any, error) {
			var c C
			return card.FromCard(k, &c)
		}
	}
	return models.Family{
		Arch: names[0], Aliases: names[1:], Config: zero,
		Load: func(f *gguf.File) (models.Model, error) {
			m, err := load(f)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
		New: func(cfg any, seed uint64) (models.Model, error) {
			c := cfg.(C)
			if err := c.Validate(); err != nil {
				return nil, err
			}
			return newRandom(c, seed), nil
		},
		Card: fromHeader, ConfigFromCard: fromCard,
	}
}

// Card returns a family's card from a file's header: read gives the
// configuration and the features toy does not run yet (noted, not refused:
// every file of the family can be described), cardOf its hyperparameters
// and steps, and the parameters are those the model newModel makes for it
// declares, as the file holds them.
func Card[C, M any](read func(*gguf.File) (C, []string, error), cardOf func(C) *card.Card, newModel func(C) M) func(*gguf.File) (*card.Card, error) {
	return func(h *gguf.File) (*card.Card, error) {
		c, lacking, err := read(h)
		if err != nil {
			return nil, err
		}
		return models.Lacking(models.CardFromFile(cardOf(c), h, newModel(c), c), lacking), nil
	}
}
