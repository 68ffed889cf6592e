package kernelspec

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestInstallWritesLogos: Install writes kernel.json pointing at the given
// toysh and both logos, PNGs of 32×32 and 64×64 pixels.
func TestInstallWritesLogos(t *testing.T) {
	data := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", data)
	dir, err := Install("/opt/toy/bin/toysh")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(data, "kernels", "toy"); dir != want {
		t.Errorf("installed in %s, want %s", dir, want)
	}
	var spec struct{ Argv []string }
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil || len(spec.Argv) == 0 || spec.Argv[0] != "/opt/toy/bin/toysh" {
		t.Errorf("kernel.json argv %v (%v)", spec.Argv, err)
	}
	for name, size := range map[string]int{"logo-32x32.png": 32, "logo-64x64.png": 64} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("Install did not write %s: %v", name, err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
			t.Errorf("%s is %v, want %d×%d", name, b, size, size)
		}
	}
}

// TestLogosUpToDate: the committed logos are what internal/genlogo draws
// (run go generate ./kernelspec after changing it).
func TestLogosUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	dir := t.TempDir()
	if out, err := exec.Command("go", "run", "./internal/genlogo", "-out", dir).CombinedOutput(); err != nil {
		t.Fatalf("genlogo: %v\n%s", err, out)
	}
	for _, name := range []string{"logo-32x32.png", "logo-64x64.png"} {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		committed, _ := os.ReadFile(name)
		if !bytes.Equal(got, committed) {
			t.Errorf("%s is stale: run go generate ./kernelspec", name)
		}
	}
}
