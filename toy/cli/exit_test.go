package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// Exit statuses: 2 for bad input, 1 for what failed on the machine. An
// error the system gives for a full disk, a read-only file system or a
// permission is a failure, however deeply it is wrapped; a missing file or a
// path through a file is a path the user gave.
func TestExitStatusOfSystemErrors(t *testing.T) {
	wrap := func(err error) error {
		return fmt.Errorf("checkpoint x: %w", &os.PathError{Op: "write", Path: "x", Err: err})
	}
	for _, c := range []struct {
		err  error
		want int
	}{
		{wrap(syscall.ENOSPC), 1}, {wrap(syscall.EDQUOT), 1}, {wrap(syscall.EROFS), 1}, {wrap(syscall.EACCES), 1},
		{wrap(syscall.EPERM), 1}, {wrap(syscall.EIO), 1},
		{wrap(syscall.ENOENT), 2}, {wrap(syscall.ENOTDIR), 2}, {fmt.Errorf("%w: x", errUsage), 2}, {errors.New("bad model"), 2},
	} {
		if got := exitStatus(c.err); got != c.want {
			t.Errorf("%v: status %d, want %d", c.err, got, c.want)
		}
	}
}

// A run directory the system will not let toy make (sysfs refuses mkdir,
// to root too, with EPERM, and to others with EACCES) exits 1; it exited 2,
// as bad input.
func TestExitStatusNotPermitted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /sys")
	}
	if st, err := os.Stat("/sys/kernel"); err != nil || !st.IsDir() {
		t.Skip("no sysfs")
	}
	model, data := trainFixture(t)
	status, _, errs := runToy(trainArgs("from-scratch", model, data, "/sys/toy-test-run")...)
	if status != 1 || !(strings.Contains(errs, "operation not permitted") || strings.Contains(errs, "permission denied")) {
		t.Errorf("--out under /sys: status %d, %q", status, errs)
	}
	status, _, errs = runToy("new", "/sys/toy-test-lab")
	if status != 1 {
		t.Errorf("toy new under /sys: status %d, %q", status, errs)
	}
	// A file the user names that is not there is still bad input.
	status, _, errs = runToy(trainArgs("from-scratch", model, filepath.Join(t.TempDir(), "none.txt"), t.TempDir())...)
	if status != 2 {
		t.Errorf("--data that does not exist: status %d, %q", status, errs)
	}
}
