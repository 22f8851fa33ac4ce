// Command cudainfo prints the version these bindings follow, every
// library of the bindings with its version and the file loaded (or why it
// did not load), the CUDA driver's version and file, and every device with
// its main attributes, through package cuda. Without a driver or a device
// it says why and exits 1; an attribute it cannot read is printed as its
// error and makes it exit 1 at the end. A missing library does not: a
// program needs only the libraries it calls.
//
//	go run ./cmd/cudainfo
//	go run -tags cuda13000 ./cmd/cudainfo   # with the CUDA 13.0 bindings
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cudainfo:", err)
		os.Exit(1)
	}
}

func version(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

func run(out io.Writer) error {
	fmt.Fprintf(out, "bindings: CUDA %s (cu.HeaderVersion() %d)\n", version(cu.HeaderVersion()), cu.HeaderVersion())
	printLibraries(out)
	devs, err := cuda.Devices()
	switch {
	case errors.Is(err, cuda.ErrNoDriver):
		return fmt.Errorf("no CUDA driver: %w", err)
	case errors.Is(err, cu.CUDA_ERROR_NO_DEVICE):
		return fmt.Errorf("no CUDA device: %w", err)
	case err != nil:
		return err
	}
	drv, err := cuda.DriverVersion()
	if err != nil {
		return err
	}
	file, err := driverPath()
	if err != nil {
		file = "(" + err.Error() + ")"
	}
	fmt.Fprintf(out, "driver:   CUDA %s (%d) %s\n", version(drv), drv, file)
	if drv < cu.HeaderVersion() {
		fmt.Fprintf(out, "          older than the bindings: functions newer than CUDA %s report ErrMissingFunction\n", version(drv))
	}
	fmt.Fprintf(out, "devices:  %d\n", len(devs))

	var failed []string
	for _, d := range devs {
		failed = append(failed, device(out, d)...)
	}
	if len(devs) > 1 {
		failed = append(failed, peers(out, devs)...)
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not read: %s", strings.Join(failed, "; "))
	}
	return nil
}

// device prints one device and returns what it could not read.
func device(out io.Writer, d cuda.Device) (failed []string) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	defer w.Flush()
	row := func(name string, v any, err error) {
		if err != nil {
			failed = append(failed, fmt.Sprintf("device %d %s: %v", d.Ordinal(), name, err))
			fmt.Fprintf(w, "  %s\terror: %v\n", name, err)
			return
		}
		fmt.Fprintf(w, "  %s\t%v\n", name, v)
	}
	intRow := func(name string, get func() (int, error), unit string) {
		v, err := get()
		row(name, fmt.Sprintf("%d%s", v, unit), err)
	}
	boolRow := func(name string, get func() (bool, error)) {
		v, err := get()
		yes := "no"
		if v {
			yes = "yes"
		}
		row(name, yes, err)
	}

	name, err := d.Name()
	if err != nil {
		name = "(" + err.Error() + ")"
		failed = append(failed, fmt.Sprintf("device %d name: %v", d.Ordinal(), err))
	}
	fmt.Fprintf(w, "\ndevice %d: %s\n", d.Ordinal(), name)
	uuid, err := d.UUID()
	row("uuid", uuid, err)
	bus, err := d.PCIBusID()
	row("pci bus id", bus, err)
	major, minor, err := d.ComputeCapability()
	row("compute capability", fmt.Sprintf("%d.%d (sm_%d%d)", major, minor, major, minor), err)
	mem, err := d.TotalMemory()
	row("memory", fmt.Sprintf("%d MiB", mem>>20), err)
	intRow("multiprocessors", d.MultiprocessorCount, "")
	intRow("max threads per block", d.MaxThreadsPerBlock, "")
	intRow("max threads per SM", d.MaxThreadsPerMultiprocessor, "")
	intRow("warp size", d.WarpSize, "")
	block, err := d.MaxBlockDim()
	row("max block", fmt.Sprintf("%d x %d x %d", block.X, block.Y, block.Z), err)
	grid, err := d.MaxGridDim()
	row("max grid", fmt.Sprintf("%d x %d x %d", grid.X, grid.Y, grid.Z), err)
	intRow("shared memory per block", d.MaxSharedMemoryPerBlock, " bytes")
	intRow("L2 cache", d.L2CacheSize, " bytes")
	intRow("clock", d.ClockRate, " kHz")
	intRow("memory clock", d.MemoryClockRate, " kHz")
	intRow("memory bus", d.MemoryBusWidth, " bits")
	intRow("copy engines", d.AsyncEngineCount, "")
	boolRow("memory pools", d.SupportsMemoryPools)
	boolRow("managed memory", d.SupportsManagedMemory)
	boolRow("unified addressing", d.SupportsUnifiedAddressing)
	boolRow("ECC", d.ECCEnabled)
	return failed
}

// peers prints which devices can access which others' memory.
func peers(out io.Writer, devs []cuda.Device) (failed []string) {
	fmt.Fprintln(out, "\npeer access (row can access column):")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	defer w.Flush()
	fmt.Fprint(w, " ")
	for _, d := range devs {
		fmt.Fprintf(w, "\t%d", d.Ordinal())
	}
	fmt.Fprintln(w)
	for _, a := range devs {
		fmt.Fprintf(w, "%d", a.Ordinal())
		for _, b := range devs {
			cell := "-"
			if a != b {
				ok, err := cuda.CanAccessPeer(a, b)
				switch {
				case err != nil:
					cell = "error"
					failed = append(failed, fmt.Sprintf("peer access %d→%d: %v", a.Ordinal(), b.Ordinal(), err))
				case ok:
					cell = "yes"
				default:
					cell = "no"
				}
			}
			fmt.Fprintf(w, "\t%s", cell)
		}
		fmt.Fprintln(w)
	}
	return failed
}
