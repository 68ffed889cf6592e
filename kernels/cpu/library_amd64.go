//go:build linux && amd64

// The amd64 libraries and the CPU features each needs.

package cpu

import (
	"embed"

	"golang.org/x/sys/cpu"
)

//go:embed lib/libtoy-amd64-*.so
var libFS embed.FS

// variants lists the amd64 libraries, best first.
func variants() []variant {
	x := cpu.X86
	haswell := x.HasAVX2 && x.HasFMA && x.HasF16C && x.HasBMI1 && x.HasBMI2 && x.HasPOPCNT
	return []variant{
		{"avx512", haswell && x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ && x.HasAVX512CD && x.HasAVX512VNNI},
		{"avxvnni", haswell && x.HasAVXVNNI},
		{"avx2", haswell},
		{"x86-64", true},
	}
}

// Features lists the CPU features the variants look at.
func Features() []string {
	x := cpu.X86
	var f []string
	for _, c := range []struct {
		name string
		ok   bool
	}{{"avx2", x.HasAVX2}, {"fma", x.HasFMA}, {"f16c", x.HasF16C}, {"avx512f", x.HasAVX512F}, {"avx512bw", x.HasAVX512BW},
		{"avx512vl", x.HasAVX512VL}, {"avx512vnni", x.HasAVX512VNNI}, {"avxvnni", x.HasAVXVNNI}} {
		if c.ok {
			f = append(f, c.name)
		}
	}
	return f
}
