// Importance matrices: the mean squared activation each weight matrix's
// input columns see on a text (llama-imatrix), which quantizing with
// weights the rounding by.

package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/tensor"
)

// Imatrix is an importance matrix as llama-imatrix writes it: for each
// weight matrix, by its tensor name, the sum over the activation rows it
// multiplied of each input column's square (Sums: [experts·cols], expert
// after expert; one expert for a dense matrix), and the number of rows
// summed (Counts: one per expert). ChunkCount chunks of ChunkSize tokens
// of the Datasets made it.
type Imatrix struct {
	Sums       map[string][]float32
	Counts     map[string][]float32
	Datasets   []string
	ChunkCount int
	ChunkSize  int
	// Legacy: read from llama.cpp's older .dat format, whose sums were
	// already averaged over the chunks (see Weights).
	Legacy bool
}

// The keys and suffixes of a GGUF imatrix file.
const (
	imatrixDatasets   = "imatrix.datasets"
	imatrixChunkCount = "imatrix.chunk_count"
	imatrixChunkSize  = "imatrix.chunk_size"
	imatrixSums       = ".in_sum2"
	imatrixCounts     = ".counts"
)

// Weights returns the importance of each matrix's columns as
// llama-quantize reads the file: the mean square per expert (an expert
// that saw no rows gets ones), or for the legacy format the sums over the
// number of calls.
func (im *Imatrix) Weights() map[string][]float32 {
	out := make(map[string][]float32, len(im.Sums))
	for name, sums := range im.Sums {
		counts := im.Counts[name]
		w := make([]float32, len(sums))
		if im.Legacy {
			n := float32(0)
			if len(counts) > 0 {
				n = counts[0]
			}
			for i, s := range sums {
				if w[i] = s; n > 0 {
					w[i] = s / n
				}
			}
			out[name] = w
			continue
		}
		cols := len(sums) / len(counts)
		for e, c := range counts {
			for i := e * cols; i < (e+1)*cols; i++ {
				if w[i] = 1; c > 0 {
					w[i] = sums[i] / c
				}
			}
		}
		out[name] = w
	}
	return out
}

// Writer returns a writer of the imatrix as a GGUF file, as llama-imatrix
// writes one (general.type "imatrix"; NAME.in_sum2 [experts, cols] and
// NAME.counts [experts, 1] per matrix, by name).
func (im *Imatrix) Writer() (*Writer, error) {
	w := NewWriter()
	w.SetString("general.type", "imatrix")
	w.SetStrings(imatrixDatasets, im.Datasets)
	w.SetUint32(imatrixChunkCount, uint32(im.ChunkCount))
	w.SetUint32(imatrixChunkSize, uint32(im.ChunkSize))
	names := make([]string, 0, len(im.Sums))
	for name := range im.Sums {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		sums, counts := im.Sums[name], im.Counts[name]
		if len(counts) == 0 || len(sums)%len(counts) != 0 {
			return nil, fmt.Errorf("imatrix %s: %d sums for %d counts", name, len(sums), len(counts))
		}
		if err := w.AddFloat32(name+imatrixSums, tensor.F32, sums, len(counts), len(sums)/len(counts)); err != nil {
			return nil, err
		}
		if err := w.AddFloat32(name+imatrixCounts, tensor.F32, counts, len(counts), 1); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// ErrImatrix is returned for a file that is no importance matrix.
var ErrImatrix = errors.New("gguf: not an importance matrix")

// ReadImatrix reads an importance matrix: a GGUF file as llama-imatrix
// writes it, or llama.cpp's older .dat format.
func ReadImatrix(path string) (*Imatrix, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(raw, []byte("GGUF")) {
		im, err := readLegacyImatrix(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return im, nil
	}
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	im := &Imatrix{Sums: map[string][]float32{}, Counts: map[string][]float32{}}
	if f.Has(imatrixDatasets) {
		if im.Datasets, err = f.Strings(imatrixDatasets); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	for key, dst := range map[string]*int{imatrixChunkCount: &im.ChunkCount, imatrixChunkSize: &im.ChunkSize} {
		if f.Has(key) {
			if *dst, err = f.Int(key); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	for _, ti := range f.Tensors {
		name, isSums := strings.CutSuffix(ti.Name, imatrixSums)
		if !isSums {
			var isCounts bool
			if name, isCounts = strings.CutSuffix(ti.Name, imatrixCounts); !isCounts {
				continue
			}
		}
		if ti.Type != tensor.F32 {
			return nil, fmt.Errorf("%s: %w: %s is %v, want F32", path, ErrImatrix, ti.Name, ti.Type)
		}
		values, err := f.Dequantize(ti.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if isSums {
			im.Sums[name] = values
		} else {
			im.Counts[name] = values
		}
	}
	if len(im.Sums) == 0 {
		return nil, fmt.Errorf("%s: %w: no NAME%s tensors", path, ErrImatrix, imatrixSums)
	}
	for name, sums := range im.Sums {
		counts := im.Counts[name]
		if len(counts) == 0 || len(sums)%len(counts) != 0 {
			return nil, fmt.Errorf("%s: %w: %s has %d sums for %d counts", path, ErrImatrix, name, len(sums), len(counts))
		}
		for i := range counts {
			counts[i] = float32(math.Round(float64(counts[i]))) // counts are whole, as llama.cpp rounds them
		}
	}
	for name := range im.Counts {
		if im.Sums[name] == nil {
			return nil, fmt.Errorf("%s: %w: %s has counts and no sums", path, ErrImatrix, name)
		}
	}
	return im, nil
}

// readLegacyImatrix reads llama.cpp's .dat format: int32 n, then n
// entries (int32 name length, name, int32 calls, int32 values, float32
// values), then optionally int32 chunks and a length-prefixed dataset.
func readLegacyImatrix(raw []byte) (*Imatrix, error) {
	r := bytes.NewReader(raw)
	var n int32
	read := func(v any) error { return binary.Read(r, binary.LittleEndian, v) }
	if err := read(&n); err != nil || n < 1 {
		return nil, fmt.Errorf("%w: no entries", ErrImatrix)
	}
	im := &Imatrix{Sums: map[string][]float32{}, Counts: map[string][]float32{}, Legacy: true}
	for i := range int(n) {
		var size, calls, nval int32
		if err := read(&size); err != nil || size < 0 || int64(size) > int64(r.Len()) {
			return nil, fmt.Errorf("%w: entry %d: bad name length", ErrImatrix, i)
		}
		name := make([]byte, size)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrImatrix, i, err)
		}
		if err := read(&calls); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrImatrix, i, err)
		}
		if err := read(&nval); err != nil || nval < 1 || int64(nval)*4 > int64(r.Len()) {
			return nil, fmt.Errorf("%w: entry %d (%s): bad value count", ErrImatrix, i, name)
		}
		values := make([]float32, nval)
		if err := read(values); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrImatrix, i, err)
		}
		im.Sums[string(name)] = values
		im.Counts[string(name)] = []float32{float32(calls)}
	}
	var chunks, size int32
	if read(&chunks) == nil {
		im.ChunkCount = int(chunks)
		if read(&size) == nil && size > 0 && int64(size) <= int64(r.Len()) {
			dataset := make([]byte, size)
			if _, err := io.ReadFull(r, dataset); err == nil {
				im.Datasets = []string{string(dataset)}
			}
		}
	}
	return im, nil
}
