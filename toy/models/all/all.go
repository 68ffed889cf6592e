// Package all links every architecture toy ships, each registering itself
// with package models from its init function:
//
//	import _ "github.com/toyml/toy/toy/models/all"
//
// Package toy imports it, so a program that uses toy can load every
// built-in architecture; a program that wants only some imports those.
package all

import (
	_ "github.com/toyml/toy/toy/models/bert"
	_ "github.com/toyml/toy/toy/models/cohere"
	_ "github.com/toyml/toy/toy/models/deepseek2"
	_ "github.com/toyml/toy/toy/models/ernie"
	_ "github.com/toyml/toy/toy/models/gemma"
	_ "github.com/toyml/toy/toy/models/glm4"
	_ "github.com/toyml/toy/toy/models/gpt2"
	_ "github.com/toyml/toy/toy/models/gptoss"
	_ "github.com/toyml/toy/toy/models/lfm2"
	_ "github.com/toyml/toy/toy/models/llama"
	_ "github.com/toyml/toy/toy/models/llama4"
	_ "github.com/toyml/toy/toy/models/olmo2"
	_ "github.com/toyml/toy/toy/models/olmoe"
	_ "github.com/toyml/toy/toy/models/phi2"
	_ "github.com/toyml/toy/toy/models/phi3"
	_ "github.com/toyml/toy/toy/models/qwen35"
	_ "github.com/toyml/toy/toy/models/starcoder2"
	_ "github.com/toyml/toy/toy/models/vit"
)
