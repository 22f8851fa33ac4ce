//go:build linux && (amd64 || arm64)

package gds_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/gds"
)

// Example loads a file of float32 weights straight into device memory.
func Example() {
	dir, err := os.MkdirTemp("", "gds-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weights.bin")
	// Four float32 values, 1.5, 2, -3 and 0.25, little-endian.
	raw := []byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0xc0, 0, 0, 0x80, 0x3e}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		fmt.Println(err)
		return
	}

	dev, err := cuda.GetDevice(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	f, err := os.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	gf, err := gds.Open(s, f)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gf.Close()

	w, err := cuda.AllocSlice[float32](ctx, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()
	n, err := gds.ReadAt(gf, w, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	host := make([]float32, 4)
	if err := w.CopyTo(host); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n, "bytes:", host)
	// Output: 16 bytes: [1.5 2 -3 0.25]
}
