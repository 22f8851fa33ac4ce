//go:build linux && (amd64 || arm64)

package gds_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/gds"
	"github.com/gocuda/gocuda/generated/cufile"
)

// Example loads a file of float32 weights straight into device memory,
// or through the host where cuFile registers no file (a tmpfs, or a
// container without udev's records).
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

	s, err := cuda.OpenStream(0)
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
	w, err := cuda.AllocSlice[float32](s, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	if err := load(s, f, w); err != nil {
		fmt.Println(err)
		return
	}
	host := make([]float32, 4)
	if err := w.CopyTo(host); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(host)
	// Output: [1.5 2 -3 0.25]
}

// load fills w from the start of f: with cuFile where it takes the file,
// else through the host.
func load(s *cuda.Stream, f *os.File, w *cuda.Slice[float32]) error {
	gf, err := gds.Open(s, f)
	if errors.Is(err, cufile.CU_FILE_HANDLE_NOT_REGISTERED) {
		host := make([]float32, w.Len())
		if err := binary.Read(f, binary.LittleEndian, host); err != nil {
			return err
		}
		return w.CopyFrom(host)
	}
	if err != nil {
		return err
	}
	defer gf.Close()
	_, err = gds.ReadAt(gf, w, 0)
	return err
}
