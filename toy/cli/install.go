// toy install: check the backends and say which one runs.

package cli

import (
	"flag"
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
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: toy install\n\nLoads each backend, runs its self-test and prints which one is active.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
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
// beside toy or on the PATH, and says what it did.
func registerKernel() string {
	toysh := ""
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "toysh"); fileExists(p) {
			toysh = p
		}
	}
	if toysh == "" {
		if p, err := exec.LookPath("toysh"); err == nil {
			toysh = p
		}
	}
	if toysh == "" {
		return "kernel not registered: no toysh found (go install github.com/toyml/toy/cmd/toysh@latest, then toy install)"
	}
	dir, err := kernelspec.Install(toysh)
	if err != nil {
		return "kernel not registered: " + err.Error()
	}
	return "kernel registered in " + dir + " (runs " + toysh + ")"
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
