// toy install: check the backends and say which one runs.

package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/toyml/toy/kernels/cpu"
	"github.com/toyml/toy/kernels/cuda"
	"github.com/toyml/toy/kernelspec"
	"github.com/toyml/toy/toy"
)

// runInstall builds nothing: it loads each backend, runs its self-test
// against the pure-Go reference, and prints what is active.
func runInstall(args []string, stdout io.Writer) error {
	pos, err := parseFlags(installFlags(), args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: toy install takes no arguments", errUsage)
	}
	fmt.Fprintf(stdout, "platform   %s/%s, %d cores\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(stdout, "go         ok (the reference backend)\n")
	var failed error
	if b, err := cpu.Load(); err != nil {
		fmt.Fprintf(stdout, "native     unavailable: %v\n", err)
	} else {
		status := "ok"
		if err := cpu.SelfTest(b); err != nil {
			status, failed = "FAILED: "+err.Error(), err
		}
		fmt.Fprintf(stdout, "native     %s\n", status)
		fmt.Fprintf(stdout, "  variant  %s (this CPU runs: %s)\n", b.Variant(), strings.Join(cpu.Variants(), ", "))
		fmt.Fprintf(stdout, "  features %s\n", strings.Join(cpu.Features(), " "))
		fmt.Fprintf(stdout, "  library  %s\n", b.Path())
	}
	if b, err := cuda.Load(); err != nil {
		fmt.Fprintf(stdout, "cuda       unavailable: %v\n", err)
	} else {
		status := "ok"
		if err := cuda.SelfTest(b); err != nil {
			status, failed = "FAILED: "+err.Error(), err
		}
		info := b.Info()
		fmt.Fprintf(stdout, "cuda       %s\n", status)
		fmt.Fprintf(stdout, "  gpu      %s (compute %d.%d, %d SMs, %.1f GiB)\n", info.Name, info.Major, info.Minor, info.SMs, float64(info.TotalMem)/(1<<30))
		fmt.Fprintf(stdout, "  driver   CUDA %s\n", info.DriverString())
		fmt.Fprintf(stdout, "  gemm     %s\n", info.GEMM())
	}
	active := toy.BackendName()
	if err := toy.BackendError(); err != nil {
		active += " (TOY_BACKEND asked for another: " + err.Error() + ")"
	}
	fmt.Fprintf(stdout, "active     %s\n", active)
	fmt.Fprintf(stdout, "jupyter    %s\n", registerKernel())
	return failed
}

// registerKernel installs the Jupyter kernelspec when a toysh binary sits
// beside toy, on the PATH or where go install puts it, and says what it did.
func registerKernel() string {
	toysh := findToysh()
	if toysh == "" {
		return "kernel not registered: no toysh beside toy, on the PATH or in Go's bin directory; build it with `" + toyshInstallHint() + "`, then run toy install again"
	}
	dir, err := kernelspec.Install(toysh)
	if err != nil {
		return "kernel not registered: " + err.Error()
	}
	return "kernel registered in " + dir + " (runs " + toysh + ")"
}

// findToysh looks for toysh beside this program, on the PATH, and in the
// directory go install writes to ($GOBIN, else $GOPATH/bin, else ~/go/bin).
func findToysh() string {
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), toyshName()); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("toysh"); err == nil {
		return p
	}
	var bins []string
	if bin := os.Getenv("GOBIN"); bin != "" {
		bins = append(bins, bin)
	} else if gopath := os.Getenv("GOPATH"); gopath != "" {
		for _, d := range filepath.SplitList(gopath) {
			bins = append(bins, filepath.Join(d, "bin"))
		}
	} else if home, err := os.UserHomeDir(); err == nil {
		bins = append(bins, filepath.Join(home, "go", "bin"))
	}
	for _, d := range bins {
		if p := filepath.Join(d, toyshName()); fileExists(p) {
			return p
		}
	}
	return ""
}

func toyshName() string {
	if runtime.GOOS == "windows" {
		return "toysh.exe"
	}
	return "toysh"
}

// toyshInstallHint is the command that installs toysh for this toy: from
// the checkout it was built from (found as toy new finds it), or, for a
// published toy, that version from the module proxy. An unpublished
// module's @latest does not exist, so a development build never says so.
func toyshInstallHint() string {
	if v := publishedToy(); v != "" { // new.go
		return "go install " + toyModule + "/cmd/toysh@" + v
	}
	for _, start := range checkoutHints() {
		if root := toyRoot(start); root != "" {
			return "go install -C " + shellQuote(root) + " ./cmd/toysh"
		}
	}
	return "go install ./cmd/toysh in a toy checkout"
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
