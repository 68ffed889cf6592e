//go:build linux && arm64

// The arm64 libraries and the CPU features each needs.

package cpu

import (
	"embed"

	"golang.org/x/sys/cpu"
)

//go:embed lib/libtoy-arm64-*.so
var libFS embed.FS

// variants lists the arm64 libraries, best first. ASIMDDP is the dot-product
// extension (sdot), ARMv8.2's optional part.
func variants() []variant {
	return []variant{
		{"neon-dotprod", cpu.ARM64.HasASIMDDP},
		{"neon", true},
	}
}

// Features lists the CPU features the variants look at.
func Features() []string {
	f := []string{"asimd"}
	if cpu.ARM64.HasASIMDDP {
		f = append(f, "asimddp")
	}
	return f
}
