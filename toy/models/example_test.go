package models_test

import (
	"fmt"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
)

// A family registers itself from its package's init; from then on
// toy.Load, the recipes, cards and the CLI find it by name.
func ExampleRegister() {
	models.Register(models.Family{
		Arch:    "example-arch",
		Summary: "an architecture of the program's own",
		Load: func(f *gguf.File) (models.Model, error) {
			return nil, fmt.Errorf("no weights here")
		},
	})
	f, err := models.Lookup("example-arch")
	fmt.Println(f.Summary, err)
	_, err = models.Lookup("example-nope")
	fmt.Println(err != nil)
	// Output:
	// an architecture of the program's own <nil>
	// true
}
