// Reading a card's hyperparameters into a Config, one field after another.

package card

import "fmt"

// Reader fills a family's Config from a card's hyperparameters and keeps the
// first error, so that ConfigFromCard reads field after field and checks
// once:
//
//	r := k.Reader()
//	r.Int("embed", &c.Embed)
//	r.Float("norm_eps", &c.NormEps)
//	if r.Has("rope_scale") { r.Float("rope_scale", &c.RopeScaleFactor) }
//	return r.Config(c, c.Validate())
type Reader struct {
	k   *Card
	err error
}

// Reader returns a reader of c's hyperparameters.
func (c *Card) Reader() *Reader { return &Reader{k: c} }

// Has reports whether the card has the hyperparameter key (for those that
// older cards, or some configurations, leave out).
func (r *Reader) Has(key string) bool {
	_, err := r.k.Value(key)
	return err == nil
}

// Int reads an integer hyperparameter into dst.
func (r *Reader) Int(key string, dst *int) {
	if r.err == nil {
		*dst, r.err = r.k.Int(key)
	}
}

// Float reads a real hyperparameter into dst.
func (r *Reader) Float(key string, dst *float32) {
	if r.err == nil {
		*dst, r.err = r.k.Float32(key)
	}
}

// Bool reads a yes/no hyperparameter into dst.
func (r *Reader) Bool(key string, dst *bool) {
	if r.err == nil {
		*dst, r.err = r.k.Bool(key)
	}
}

// String reads a hyperparameter's text into dst.
func (r *Reader) String(key string, dst *string) {
	if r.err == nil {
		*dst, r.err = r.k.Value(key)
	}
}

// Err returns the first error of the reads so far.
func (r *Reader) Err() error { return r.err }

// Config returns cfg, or the first read error, or invalid (cfg's Validate
// result) wrapped in ErrSyntax: the end of every ConfigFromCard.
func (r *Reader) Config(cfg any, invalid error) (any, error) {
	switch {
	case r.err != nil:
		return nil, r.err
	case invalid != nil:
		return nil, fmt.Errorf("%w: %w", ErrSyntax, invalid)
	}
	return cfg, nil
}
