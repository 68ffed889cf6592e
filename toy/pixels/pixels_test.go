package pixels

import (
	"image"
	"image/color"
	"slices"
	"testing"
)

// ResizeBilinear by hand (PIL's arithmetic, see its doc):
//   - shrinking [0, 255] to one pixel: the widened triangle weighs both ½:
//     127.5, rounded half up in fixed point to 128;
//   - enlarging [0, 255] to four: centres at 0.25, 0.75, 1.25, 1.75 input
//     pixels, interpolated between pixel centres 0.5 and 1.5 and clamped at
//     the ends: 0, ¼·255 = 63.75 → 64, ¾·255 = 191.25 → 191, 255.
func TestResizeBilinearByHand(t *testing.T) {
	gray := func(v ...uint8) []uint8 {
		var out []uint8
		for _, x := range v {
			out = append(out, x, x, x)
		}
		return out
	}
	if got := ResizeBilinear(gray(0, 255), 2, 1, 1, 1); !slices.Equal(got, gray(128)) {
		t.Errorf("2→1: %v, want 128", got)
	}
	if got := ResizeBilinear(gray(0, 255), 2, 1, 4, 1); !slices.Equal(got, gray(0, 64, 191, 255)) {
		t.Errorf("2→4: %v, want 0 64 191 255", got)
	}
	if got := ResizeBilinear(gray(0, 255), 1, 2, 1, 4); !slices.Equal(got, gray(0, 64, 191, 255)) {
		t.Errorf("columns 2→4: %v, want 0 64 191 255", got)
	}
	in := gray(1, 2, 3, 4, 5, 6)
	if got := ResizeBilinear(in, 3, 2, 3, 2); !slices.Equal(got, in) {
		t.Errorf("same size: %v, want the input", got)
	}
}

// RGB8 drops alpha without blending, as PIL's convert("RGB") does.
func TestRGB8DropsAlpha(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.NRGBA{10, 20, 30, 0})
	img.Set(1, 0, color.NRGBA{40, 50, 60, 128})
	pix, w, h := RGB8(img)
	if w != 2 || h != 1 || !slices.Equal(pix, []uint8{10, 20, 30, 40, 50, 60}) {
		t.Errorf("RGB8: %v, %d×%d", pix, w, h)
	}
	gray := image.NewGray(image.Rect(0, 0, 1, 1))
	gray.Set(0, 0, color.Gray{7})
	if pix, _, _ := RGB8(gray); !slices.Equal(pix, []uint8{7, 7, 7}) {
		t.Errorf("RGB8 of gray 7: %v", pix)
	}
}
