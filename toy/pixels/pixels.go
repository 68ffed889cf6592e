// Package pixels decodes images and resizes them as Python's image
// libraries do, so that a model's preprocessing is its reference's to the
// level (vit.Config.Preprocess: Hugging Face's ViTImageProcessor).
//
// Pixels are 8-bit RGB, row by row, 3 bytes a pixel, as PIL holds an "RGB"
// image. PNG images decode exactly as PIL decodes them; Go's JPEG decoder may
// differ from libjpeg by a level or two in some pixels.
package pixels

import (
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // decoders for image.Decode
	_ "image/jpeg" //
	_ "image/png"  //
	"os"
)

// Load decodes the PNG, JPEG or GIF image at path.
func Load(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return img, nil
}

// RGB8 returns img's pixels as 8-bit RGB, row by row, 3 bytes a pixel, and
// its width and height. Alpha is dropped without blending (PIL's
// convert("RGB")); 16-bit channels keep their high byte.
func RGB8(img image.Image) (pix []uint8, w, h int) {
	b := img.Bounds()
	w, h = b.Dx(), b.Dy()
	pix = make([]uint8, 0, 3*w*h)
	if n, ok := img.(*image.NRGBA); ok { // PNG with alpha: the fast path
		for y := 0; y < h; y++ {
			row := n.Pix[y*n.Stride : y*n.Stride+4*w]
			for x := 0; x < w; x++ {
				pix = append(pix, row[4*x], row[4*x+1], row[4*x+2])
			}
		}
		return pix, w, h
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			pix = append(pix, c.R, c.G, c.B)
		}
	}
	return pix, w, h
}

// precisionBits is PIL's fixed-point precision for 8-bit resampling.
const precisionBits = 32 - 8 - 2

// ResizeBilinear resizes 8-bit RGB pixels (3 bytes a pixel, row by row) from
// w×h to W×H as PIL's Image.resize((W, H), BILINEAR) does, level for level:
// each output pixel is a weighted sum of the input pixels within one output
// pixel's width of its centre, with triangle weights
//
//	k(t) = max(0, 1 − |t|),   t = (x + ½ − centre)·min(1, W/w)
//
// normalised to sum 1 — plain bilinear interpolation when enlarging, a
// widened (antialiasing) triangle when shrinking. Like PIL it resizes the
// rows first, then the columns, with weights in fixed point (22 bits) and
// the intermediate image rounded to 8 bits.
func ResizeBilinear(pix []uint8, w, h, W, H int) []uint8 {
	if len(pix) != 3*w*h || W <= 0 || H <= 0 {
		panic(fmt.Sprintf("pixels.ResizeBilinear: %d bytes for %d×%d RGB, to %d×%d", len(pix), w, h, W, H))
	}
	if W != w {
		first, k := pilCoeffs(w, W)
		out := make([]uint8, 3*W*h)
		for y := 0; y < h; y++ {
			for x := 0; x < W; x++ {
				for c := 0; c < 3; c++ {
					ss := int32(1) << (precisionBits - 1)
					for j, kj := range k[x] {
						ss += int32(pix[3*(y*w+first[x]+j)+c]) * kj
					}
					out[3*(y*W+x)+c] = clip8(ss)
				}
			}
		}
		pix, w = out, W
	}
	if H != h {
		first, k := pilCoeffs(h, H)
		out := make([]uint8, 3*w*H)
		for y := 0; y < H; y++ {
			for x := 0; x < w; x++ {
				for c := 0; c < 3; c++ {
					ss := int32(1) << (precisionBits - 1)
					for j, kj := range k[y] {
						ss += int32(pix[3*((first[y]+j)*w+x)+c]) * kj
					}
					out[3*(y*w+x)+c] = clip8(ss)
				}
			}
		}
		pix = out
	}
	return pix
}

// pilCoeffs returns, for each of out output pixels along an axis of in input
// pixels, the first input pixel it reads and its fixed-point weights, as
// PIL's precompute_coeffs and normalize_coeffs_8bpc compute them (in float64,
// then rounded to 22 fractional bits).
func pilCoeffs(in, out int) (first []int, k [][]int32) {
	scale := float64(in) / float64(out)
	filterScale := max(scale, 1)
	support := 1 * filterScale // the triangle's support, 1, widened when shrinking
	ss := 1 / filterScale      // multiplied, not divided by: PIL's rounding
	first, k = make([]int, out), make([][]int32, out)
	for xx := range out {
		center := (float64(xx) + 0.5) * scale
		lo := max(int(center-support+0.5), 0)
		hi := min(int(center+support+0.5), in)
		w := make([]float64, hi-lo)
		var sum float64
		for x := range w {
			t := (float64(x+lo) - center + 0.5) * ss
			if t < 0 {
				t = -t
			}
			w[x] = max(1-t, 0)
			sum += w[x]
		}
		first[xx], k[xx] = lo, make([]int32, len(w))
		for x := range w {
			if sum != 0 {
				w[x] /= sum
			}
			k[xx][x] = int32(0.5 + w[x]*(1<<precisionBits))
		}
	}
	return first, k
}

// clip8 takes a fixed-point sum to 0 … 255.
func clip8(v int32) uint8 {
	switch {
	case v >= 256<<precisionBits:
		return 255
	case v <= 0:
		return 0
	}
	return uint8(v >> precisionBits)
}
