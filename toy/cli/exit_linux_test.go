package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A training run on a full disk (a 256 KiB tmpfs, where this process may
// mount one) exits 1 and ends its log with the error.
func TestExitStatusDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs: needs root on Linux")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skip("cannot mount a tmpfs:", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	model, data := trainFixture(t)
	out := filepath.Join(dir, "run")
	status, _, errs := runToy(trainArgs("from-scratch", model, data, out, "--checkpoint-every", "1")...)
	if status != 1 || !strings.Contains(errs, "no space left on device") {
		t.Errorf("a full disk: status %d, %q", status, errs)
	}
	if es := events(t, out); es[len(es)-1].Type != "run_end" || !strings.Contains(es[len(es)-1].Reason, "no space left") {
		t.Errorf("the log ends with %+v", es[len(es)-1])
	}
}
