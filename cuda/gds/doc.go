// Package gds reads and writes files straight into and out of device
// memory with cuFile, NVIDIA's GPUDirect Storage: on a machine set up for
// it, the file's blocks move between the storage and the GPU by DMA,
// without a copy through host memory; elsewhere cuFile's compatibility
// mode does the same through the page cache, with the same calls.
//
// A File registers an open *os.File with cuFile and is bound to a stream,
// whose context is current during each read or write:
//
//	f, _ := os.Open("weights.bin")
//	defer f.Close()
//	gf, err := gds.Open(stream, f)
//	if err != nil { ... }
//	defer gf.Close()
//	w, _ := cuda.Alloc[float32](ctx, n)
//	if _, err := gds.ReadAt(gf, w, 0); err != nil { ... }
//
// ReadAt and WriteAt follow io.ReaderAt and io.WriterAt: they move
// dst.Size() (or src.Size()) bytes at a byte offset in the file, return
// the number moved, and a short read at the end of the file returns io.EOF
// with what was read. They are synchronous: they return once the bytes
// are in device memory (or in the file), and they do not wait for work
// queued on the stream, so queue nothing on it that writes the memory
// being read, or synchronize first. Calls on one File may run
// concurrently; the slice is held for the length of a call, so closing it
// meanwhile waits.
//
// cuFile registers files of ext4, XFS and the parallel filesystems it
// supports, in compatibility mode too, but none on tmpfs or overlay: Open
// of such a file fails with an error matching ErrUnsupportedFilesystem.
// Nor does it register any on a block device whose properties udev has
// not recorded (it reads them from /run/udev/data, which many containers
// and virtual machines lack): Open's error then names the missing record.
// Both match cufile.CU_FILE_HANDLE_NOT_REGISTERED, the sign to read the
// file through the host instead.
// For GPUDirect Storage proper the file must be opened with O_DIRECT and
// offsets and sizes aligned to 4 KiB; in compatibility mode any open file
// and any offset work. The *os.File must stay open until the File is
// closed; Close deregisters it and leaves the *os.File open.
//
// cuFile's driver is opened once per process, by the first Open, and
// stays open. The library is libcufile.so.0, or the path in
// GOCUDA_LIBCUFILE; without it Open returns an error matching
// cufile.ErrNoLibrary.
//
// # Errors
//
// A failure of cuFile is a *cuda.LibraryError naming the call; errors.Is
// matches cuFile's codes (cufile.CU_FILE_HANDLE_NOT_REGISTERED, …) and
// the driver's it carries (cu.CUDA_ERROR_…). A closed or nil File, stream
// or slice gives an error matching cuda.ErrClosed, and bad arguments
// (a negative offset, a nil *os.File) are refused before cuFile is
// called.
package gds
