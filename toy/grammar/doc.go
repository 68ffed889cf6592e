// Package grammar constrains what a model may generate: JSON, a state that
// follows the text token by token and masks the tokens that cannot come
// next, so that a reply sampled under it is a JSON object.
//
// The grammar is llama.cpp's json.gbnf and a token is judged the way
// llama.cpp's grammar sampler judges it (UTF-8 decoding, unfinished
// characters, end-of-generation tokens), so that greedy decoding under the
// mask picks the tokens llama.cpp picks; tests/reference checks that on the
// gate models against llama.cpp itself.
package grammar
