// Package models is toy's layer 3 registry: the one list of architectures.
// Each architecture — toy's own packages under toy/models/..., or a user's
// package, notebook cell or lab — registers a Family from an init function,
// and every tool finds it here: toy.Load, the recipes (from scratch, warm
// start, resume, LoRA), cards, the CLI and the server.
//
//	func init() {
//		models.Register(models.Family{Arch: "mine", Load: Load, New: New, Config: Config{…}})
//	}
//
// A family declares rather than writes its loading: Config fields tagged
// with their GGUF keys (ReadConfig, gguf.Writer.SetConfig) and card symbols
// (card.Hypers), weight fields with their tensor names and shapes
// (LoadWeights: nn.Load, then nn.CheckShapes). docs/models.md shows them.
//
// # Error Handling
//
// Register panics on a family it cannot use (an empty name, a nil Load, a
// name already taken), as database/sql's Register does: it runs from init,
// where a mistake is a programming error. Lookup and Load return errors
// wrapping ErrUnknownArch; a family's Load or New that returns an error or
// panics gives an error naming the family, never a crash.
package models

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/toyml/toy/toy/card"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
)

// Model is an architecture's model: what the engine runs, plus its weights
// under their GGUF tensor names (each tensor once) and the metadata that
// describes it — general.architecture and its hyperparameters — so that a
// file written from Weights and SetMetadata loads back through its family.
type Model interface {
	engine.Model
	Weights() []nn.Named
	SetMetadata(w *gguf.Writer)
}

// Shape is the size of a model to build from scratch, as toy train
// from-scratch's flags give it. A zero field means the family's default.
type Shape struct {
	VocabSize, ContextLength  int
	Embed, Layers, Heads, FFN int
	KVHeads                   int
}

// Family is one architecture (or a set of GGUF architectures one package
// reads). Arch and Load are required; the rest is optional and enables more
// of toy.
type Family struct {
	// Arch is the general.architecture of the files the family writes.
	Arch string
	// Aliases are further general.architecture values Load reads
	// ("qwen2", "qwen3" for the llama family).
	Aliases []string
	// Summary says in one line what the family is.
	Summary string
	// Load builds the model over an open GGUF file; its weights may view the
	// file's memory.
	Load func(f *gguf.File) (Model, error)

	// Config is an example configuration of the family (a small model); its
	// type is the one New takes, and recipes.NewFromScratch finds the family
	// of a configuration by it.
	Config any
	// New returns a model with fresh random weights for cfg, a value of
	// Config's type; the same seed gives the same weights.
	New func(cfg any, seed uint64) (Model, error)
	// Sized returns a configuration of Config's type with the sizes of s
	// (toy train from-scratch --arch).
	Sized func(s Shape) any

	// Card returns the algorithm card of the model a GGUF header describes;
	// without it the family gets card.Generic's.
	Card func(h *gguf.File) (*card.Card, error)
	// ConfigFromCard reads a card back into a configuration (toy card code).
	ConfigFromCard func(c *card.Card) (any, error)
}

// Names returns Arch followed by the aliases.
func (f Family) Names() []string { return append([]string{f.Arch}, f.Aliases...) }

// ErrUnknownArch is returned for an architecture no family registered.
var ErrUnknownArch = errors.New("unknown architecture")

var (
	mu       sync.RWMutex
	byName   = map[string]*Family{}
	families []*Family // in registration order
)

// Register makes a family available to every tool. It panics on an empty
// Arch, a nil Load, or a name (Arch or alias) already registered.
func Register(f Family) {
	if f.Arch == "" {
		panic("models: Register with an empty Arch")
	}
	if f.Load == nil {
		panic(fmt.Sprintf("models: Register %q with a nil Load", f.Arch))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range f.Names() {
		if n == "" {
			panic(fmt.Sprintf("models: Register %q with an empty alias", f.Arch))
		}
		if _, dup := byName[n]; dup {
			panic(fmt.Sprintf("models: Register called twice for architecture %q", n))
		}
	}
	p := &f
	for _, n := range f.Names() {
		byName[n] = p
	}
	families = append(families, p)
	card.Register(card.Family{Archs: f.Names(), FromHeader: f.Card, Config: f.ConfigFromCard})
}

// Families returns the registered families sorted by Arch.
func Families() []Family {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Family, len(families))
	for i, f := range families {
		out[i] = *f
	}
	slices.SortFunc(out, func(a, b Family) int { return strings.Compare(a.Arch, b.Arch) })
	return out
}

// Archs returns every registered architecture name, aliases included, sorted.
func Archs() []string {
	mu.RLock()
	defer mu.RUnlock()
	var a []string
	for n := range byName {
		a = append(a, n)
	}
	slices.Sort(a)
	return a
}

// Lookup returns the family that reads architecture arch.
func Lookup(arch string) (Family, error) {
	mu.RLock()
	f, ok := byName[arch]
	mu.RUnlock()
	if !ok {
		return Family{}, fmt.Errorf("%w %q (registered: %s)", ErrUnknownArch, arch, strings.Join(Archs(), ", "))
	}
	return *f, nil
}

// Load builds the model of an open GGUF file through the family registered
// for its general.architecture. A family's Load that fails or panics gives
// an error naming the family.
func Load(f *gguf.File) (Model, error) {
	arch, err := f.Architecture()
	if err != nil {
		return nil, err
	}
	fam, err := Lookup(arch)
	if err != nil {
		return nil, err
	}
	var m Model
	err = guard(fam.Arch, "Load", func() (err error) {
		m, err = fam.Load(f)
		return err
	})
	if err == nil && isNil(m) {
		err = fmt.Errorf("%s: Load returned no model and no error", fam.Arch)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ForConfig returns the family whose Config has the type of cfg. Two
// families with one configuration type (possible for interpreted types of
// the same fields, which reflection cannot tell apart) are an error: give
// one of them a field of its own.
func ForConfig(cfg any) (Family, error) {
	t := reflect.TypeOf(cfg)
	mu.RLock()
	defer mu.RUnlock()
	var have, match []string
	var found *Family
	for _, f := range families {
		if f.Config == nil || f.New == nil {
			continue
		}
		if reflect.TypeOf(f.Config) == t {
			found = f
			match = append(match, f.Arch)
		}
		have = append(have, fmt.Sprintf("%T", f.Config))
	}
	switch len(match) {
	case 0:
		slices.Sort(have)
		return Family{}, fmt.Errorf("%w: no registered family takes a config of type %T (families build from %s)", ErrUnknownArch, cfg, strings.Join(have, ", "))
	case 1:
		return *found, nil
	}
	return Family{}, fmt.Errorf("models: families %s all take a config of type %T; give each its own configuration type", strings.Join(match, ", "), cfg)
}

// New returns a model with fresh random weights for cfg through the family
// whose Config has cfg's type.
func New(cfg any, seed uint64) (Model, error) {
	fam, err := ForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var m Model
	err = guard(fam.Arch, "New", func() (err error) {
		m, err = fam.New(cfg, seed)
		return err
	})
	if err == nil && isNil(m) {
		err = fmt.Errorf("%s: New returned no model and no error", fam.Arch)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// guard runs a family's function, turning a panic into an error that names
// the family (a user's Load must not crash a server), and prefixing an error
// that does not name it already.
func guard(arch, what string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %s panicked: %v%s", arch, what, p, panicSite())
		}
	}()
	if err = fn(); err != nil && !strings.Contains(err.Error(), arch) {
		err = fmt.Errorf("%s: %w", arch, err)
	}
	return err
}

// panicSite names the line that panicked, from inside a deferred recover:
// the first frame after the runtime's panic machinery.
func panicSite() string {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	panicking := false
	for {
		fr, more := frames.Next()
		if strings.HasPrefix(fr.Function, "runtime.") {
			panicking = true
		} else if panicking {
			return fmt.Sprintf(" (at %s:%d)", fr.File, fr.Line)
		}
		if !more {
			return ""
		}
	}
}

func isNil(m Model) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
