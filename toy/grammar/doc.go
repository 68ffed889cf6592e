// Package grammar constrains what a model may generate: a state that
// follows the text token by token and masks the tokens that cannot come
// next, so that a reply sampled under it is a JSON object (JSON), a value
// of a JSON schema (Schema: structured outputs), or a text of any grammar
// written in llama.cpp's GBNF notation (ParseGBNF, Matcher).
//
// A token is judged the way llama.cpp's grammar sampler judges it (UTF-8
// decoding, characters split between tokens, end-of-generation tokens),
// so that greedy decoding under the mask picks the tokens llama.cpp picks;
// tests/reference checks that on the gate models against llama.cpp
// itself, for its json grammar and for GBNF grammars of every construct.
// JSON is llama.cpp's json.gbnf as a hand-made automaton, the fastest
// way; Matcher runs any GBNF grammar as llama.cpp does, as a set of
// pushdown stacks, with the steps memoized and the vocabulary walked in
// sorted order so that tokens sharing a beginning share its steps. A
// schema becomes a GBNF grammar (CompileSchema), the one llama.cpp's
// converter makes of it (tests/reference holds the two to the same texts
// and the same greedy tokens), run by a Matcher; the tests check what it
// completes with an independent JSON Schema validator.
//
// Tokens joins a state (JSON or Matcher: State) to a vocabulary as the
// sample.Constraint the engine's generation takes.
package grammar
