// Package vit is the Vision Transformer image classifier (Dosovitskiy et al.
// 2020, "An Image is Worth 16x16 Words"), as Hugging Face's
// ViTForImageClassification computes it (google/vit-base-patch16-224):
//
//	X  = [x_cls; E·p_1 + b; …; E·p_N + b] + W_pos      p_n: patch n's pixels, flattened
//	X ← X + Attn(LN₁(X))                               bidirectional: every token sees every token
//	X ← X + W_down·GELU(W_up·LN₂(X) + b_up) + b_down   GELU exact: x·Φ(x)
//	z  = W_cls·LN(X)[0] + b_cls                        the [CLS] token's logits over K classes
//
// The patch embedding is a convolution with stride = kernel = P, written as
// one matrix product over the flattened patches (Patches). Attention has
// biases on its query, key and value projections and no mask; the blocks are
// pre-LayerNorm, with ε = 1e-12 in Google's checkpoints. GELU is the exact
// erf form (tensor.GELUErf), not the tanh approximation GPT-2 uses: the two
// differ by up to ~5e-4 per activation.
//
// Dimensions (row-major, one image at a time):
//
//	C  channels (3: RGB)            P  patch side, pixels
//	R  image side, pixels (H = W)   N  patches, (R/P)²
//	S  tokens, N + 1 ([CLS] first)  D  model width
//	F  MLP width                    H  attention heads, Dh = D/H
//	L  layers                       K  classes
//
// # Pixels in
//
// Preprocess does what Hugging Face's ViTImageProcessor does: resize to R×R
// with PIL's bilinear filter on 8-bit RGB (toy/pixels: a triangle filter
// widened by the scale factor when shrinking, in PIL's fixed-point
// arithmetic, so the resized pixels are PIL's to the level), rescale by
// 1/255, and normalise each channel with the file's image mean and standard
// deviation, into [C, R, R] float32. PNG images decode exactly as PIL decodes
// them; Go's JPEG decoder may differ from libjpeg by a level or two in some
// pixels.
//
// # GGUF layout
//
// There is no llama.cpp architecture for a ViT classifier; toy's files use
// architecture "vit" and llama.cpp's CLIP/mmproj tensor names where they
// apply (tools/mtmd/clip-impl.h), and "cls" for the classifier as llama.cpp's
// converter names a Hugging Face "classifier" (gguf-py tensor_mapping):
//
//	v.patch_embd.weight          [D, C, P, P]  the convolution kernel, as PyTorch stores it
//	v.patch_embd.bias            [D]
//	v.class_embd                 [D]           the [CLS] token
//	v.position_embd.weight       [S, D]
//	v.blk.N.ln1.{weight,bias}    [D]           before attention (layernorm_before)
//	v.blk.N.attn_{q,k,v}.{weight,bias}  [D, D], [D]
//	v.blk.N.attn_out.{weight,bias}      [D, D], [D]
//	v.blk.N.ln2.{weight,bias}    [D]           before the MLP (layernorm_after)
//	v.blk.N.ffn_up.{weight,bias}   [F, D], [F]
//	v.blk.N.ffn_down.{weight,bias} [D, F], [D]
//	v.post_ln.{weight,bias}      [D]           the final LayerNorm
//	cls.weight, cls.bias         [K, D], [K]
//
// Metadata is Config's, under "vit." (its gguf tags, and SetMetadata):
// uint32 sizes, float32 ε, float32 arrays image_mean and image_std [C], and
// the string array labels [K] (optional: "LABEL_k" without it).
//
// Matrices may be F32, F16, BF16 or Q8_0 (any type MatMul takes); norms,
// biases and the [CLS] token are F32. FromHF converts a Hugging Face
// checkpoint (config.json, model.safetensors, read by toy/safetensors) into
// a Model, and WriteGGUF writes it.
//
// # Error Handling
//
// Loading, decoding and conversion return errors wrapped with %w; a wrong
// input shape in Forward panics with the op and the shapes, as everywhere in
// toy.
package vit
