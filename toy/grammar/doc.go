// Package grammar constrains what a model may generate: JSON, a state that
// follows the text token by token and masks the tokens that cannot come
// next, so that a reply sampled under it is a JSON object — or, made from a
// Schema, a value of a JSON schema (structured outputs).
//
// The grammar is llama.cpp's json.gbnf and a token is judged the way
// llama.cpp's grammar sampler judges it (UTF-8 decoding, unfinished
// characters, end-of-generation tokens), so that greedy decoding under the
// mask picks the tokens llama.cpp picks; tests/reference checks that on the
// gate models against llama.cpp itself. A schema narrows the same automaton
// so that the text can always still become a valid value (no dead ends);
// the tests check what it completes with an independent JSON Schema
// validator.
package grammar
