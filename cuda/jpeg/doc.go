// Package jpeg is nvJPEG for Go programs: JPEG images decoded on the GPU
// into device memory, on a *cuda.Stream, with the safety of package cuda.
//
// A Decoder is an nvJPEG library handle with its decoding states, bound to
// a stream. It holds its own clone of the stream (and through it the
// context), follows package cuda's handle rules (Clone, Close per handle,
// the last Close destroys after the calls in flight, cuda.ErrClosed after
// Close and on nil, cleanup when dropped), and may be used from any
// goroutine: calls bind its context themselves.
//
//	d, err := jpeg.New(stream)
//	defer d.Close()
//	info, err := d.Info(data)                    // size, components, subsampling
//	img, err := d.Decode(data, jpeg.RGBI)        // device memory, on the stream
//	defer img.Close()
//	host := make([]byte, img.Planes[0].Data.Len())
//	err = img.Planes[0].Data.CopyTo(host)        // waits for the decoding
//	imgs, err := d.DecodeBatch(files, jpeg.RGB)  // many images; imgs[i].Backend says what decoded each
//
// # Formats and images
//
// An Image is Format, Width, Height and its Planes, each a
// *cuda.Slice[uint8] with its own size and Pitch (the bytes from one row
// to the next). RGBI and BGRI are one plane of interleaved pixels; RGB and
// BGR three planes; Y the luma plane; YUV the JPEG's own planes with the
// chroma at its subsampled size (Info's Widths and Heights), for images of
// three components. Decode and DecodeBatch allocate each image's planes,
// rows without padding, in one allocation on the decoder's stream: freed
// in stream order when the image is closed. DecodeInto writes into an
// image the caller made (NewImage, or planes of the caller's slices with
// any pitch), checked against the JPEG's Info first: the format's planes,
// their sizes, pitches at least a row, slices long enough.
//
// # Encoding
//
// An Encoder is the other direction, with the same handle rules: Encode
// compresses an image in device memory, RGBI, BGRI, RGB or BGR (one that
// Decode made, or the caller's planes), to JPEG bytes on the host, with a
// quality and a chroma subsampling (EncodeOptions; SubsamplingGray makes
// a grayscale JPEG). It waits for the encoding before it returns.
//
//	e, err := jpeg.NewEncoder(stream)
//	defer e.Close()
//	data, err := e.Encode(img, jpeg.EncodeOptions{Quality: 90, Subsampling: jpeg.Subsampling420})
//
// # The JPEG bytes
//
// nvJPEG takes the JPEG in host memory and reads it on the host during
// the call: it parses it there, and decodes its Huffman codes there or
// copies it into pinned buffers of its own for the device. The
// package passes the caller's []byte for the call's length (DecodeBatch
// pins the slices' arrays for it, as cgo requires of the pointers it
// passes) and keeps no reference after it returns: the bytes may be
// reused at once. The decoded image is ready when the stream reaches it.
//
// Before nvJPEG sees them, the bytes are checked: not empty, the start
// marker FF D8, whole marker segments, a frame header before the first
// scan, and an end marker FF D9 after it (a file cut short has none).
// What fails is an error matching ErrBadJPEG, and never reaches the
// library; Check runs these checks alone, with no GPU. nvJPEG's own verdicts are errors too: NVJPEG_STATUS_BAD_JPEG
// and NVJPEG_STATUS_INCOMPLETE_BITSTREAM match ErrBadJPEG,
// NVJPEG_STATUS_JPEG_NOT_SUPPORTED matches ErrUnsupported, and each
// matches its nvjpeg.NvjpegStatus_t as well:
//
//	if errors.Is(err, jpeg.ErrBadJPEG) { ... }           // whoever found it
//	if errors.Is(err, nvjpeg.NVJPEG_STATUS_BAD_JPEG) { ... }
//
// Errors from nvJPEG are *Error (cuda.LibraryError): the operation and the
// C function that failed. A missing library matches nvjpeg.ErrNoLibrary.
//
// # Goroutines
//
// nvJPEG lets one thread at a time use a JPEG state, so the calls on one
// decoder (and its clones) take turns. Goroutines that decode at once
// should each have a decoder, on streams of their own: their device work
// then overlaps too.
//
// # Batches
//
// DecodeBatch hands the images the GPU's JPEG engines can decode
// (baseline JPEGs on an A100, H100, H200 or their kin) to them in one
// batched call (a handle of NVJPEG_BACKEND_HARDWARE, made on the first
// batch), and decodes the others, and every image on GPUs without
// engines, one by one as Decode does. Each image's Backend says which
// part of nvJPEG decoded it; Decoder.Hardware says whether the engines
// are there, and if not, why. The engines do the Huffman decoding too,
// so a batch on them leaves the SMs and the host free: that is where
// DecodeBatch wins. nvJPEG's batched decoder on its default backend is
// not used: it decodes the Huffman codes of the batch on the host (the
// hybrid backend's way; its max_cpu_threads is no longer read), and on
// an H100 it was seven times slower than Decode in a loop, which nvJPEG
// runs with the Huffman decoding on the GPU.
//
// # Versions
//
// The package uses nvJPEG's default backend, the hardware backend for
// batches where the GPU has one, and nothing newer than CUDA 11.8's
// nvjpeg.h. It opens the nvJPEG of the bindings' CUDA version
// (libnvjpeg.so.11 with -tags cuda11080, libnvjpeg.so.13 with -tags
// cuda13000, libnvjpeg.so.12 otherwise), or the file GOCUDA_LIBNVJPEG
// names (see package generated/nvjpeg).
package jpeg
