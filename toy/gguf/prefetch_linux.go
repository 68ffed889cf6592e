// Bringing a mapped file's pages in before the weights are read (Linux).

package gguf

import "golang.org/x/sys/unix"

// prefetch maps every page of b into the process now, reading what the page
// cache lacks (MADV_POPULATE_READ, Linux 5.14), as llama.cpp's MAP_POPULATE
// does: the first forward pass then takes no page faults. Older kernels get
// the read-ahead hint alone. A file larger than three quarters of the
// machine's memory is left alone: its pages could not all stay, and reading
// them ahead would only push out others. Errors are ignored: the pages come
// in on first use either way.
func prefetch(b []byte) {
	if len(b) == 0 {
		return
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil && uint64(len(b)) > uint64(si.Totalram)*uint64(si.Unit)/4*3 {
		return
	}
	if unix.Madvise(b, unix.MADV_POPULATE_READ) != nil {
		unix.Madvise(b, unix.MADV_WILLNEED)
	}
}
