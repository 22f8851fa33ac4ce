// Package dnn is cuDNN for Go programs: convolutions, softmax, batch
// normalization and fused attention on tensors in *cuda.Slice memory,
// queued on a *cuda.Stream, with the safety of package cuda.
//
// # Handles
//
// A Handle is a cuDNN handle bound to a stream (cudnnCreate,
// cudnnSetStream). It holds its own clone of the stream (and through it
// the context), follows package cuda's handle rules (Clone, Close per
// handle, the last Close destroys after the calls in flight, ErrClosed
// after Close and on nil, cleanup when dropped), and may be used from any
// goroutine: calls bind its context themselves, and calls on one handle,
// its clones included, take turns, since a cuDNN handle serves one host
// thread at a time. For work in parallel on the host, make a handle per
// stream.
//
//	h, err := dnn.New(stream)
//	defer h.Close()
//
// # Tensors
//
// A Tensor is a description of a 4-D tensor in a Slice: its layout (NCHW
// or NHWC, packed) and its dimensions N, C, H, W. A Filter is a
// convolution's weights: K filters of C channels of R×S taps, in the same
// two layouts (KCRS and KRSC). The element type is float32, cuda.Float16
// or cuda.BFloat16, one type for all the tensors of a call. Every call
// checks its tensors before cuDNN sees them: positive dimensions, at most
// 2³¹−1 elements (cuDNN's legacy API counts in C ints), a known layout,
// shapes that fit each other, Slices long enough (longer is fine: the
// first elements are the tensor's), and outputs that share no memory with
// inputs. A mismatch is an error naming both sides, and nothing is
// queued.
//
//	x := dnn.NewTensor(xs, dnn.NHWC, 8, 64, 56, 56) // xs a *cuda.Slice[cuda.Float16]
//	w := dnn.NewFilter(ws, dnn.NHWC, 128, 64, 3, 3)
//
// # Convolutions
//
// Conv is a 2-D convolution's padding, stride, dilation and groups (zero
// stride, dilation or groups mean 1). ConvOutput gives the output's shape
// without a GPU; ConvForward computes y = x ∗ w (cross-correlation, as
// deep learning frameworks mean it):
//
//	c := dnn.Conv{PadH: 1, PadW: 1}
//	n, k, p, q, err := dnn.ConvOutput(c, x, w)
//	ys, err := cuda.AllocSlice[cuda.Float16](stream, n*k*p*q)
//	y := dnn.NewTensor(ys, dnn.NHWC, n, k, p, q)
//	err = dnn.ConvForward(h, c, x, w, y)
//
// ConvBiasReLU fuses a per-channel bias and a ReLU into the convolution,
// y = max(0, x ∗ w + bias), in one cuDNN call
// (cudnnConvolutionBiasActivationForward) with the same algorithm.
//
// The first convolution of a shape (types, layout, dimensions, Conv)
// makes its cuDNN descriptors, checks cuDNN's output shape
// (cudnnGetConvolution2dForwardOutputDim) against the package's, and
// chooses an algorithm: by cuDNN's heuristics
// (cudnnGetConvolutionForwardAlgorithm_v7) or, after
// SetSearch(Exhaustive), by running the candidates on the call's tensors
// (cudnnFindConvolutionForwardAlgorithmEx). The handle keeps all this for
// the next calls of the shape, which make one cuDNN call each. The
// algorithm's workspace is the handle's, allocated on first need and
// grown when a shape needs more, up to SetWorkspaceLimit
// (WorkspaceLimit, 256 MiB, by default); it is freed with the handle.
//
// Every type accumulates in float32. Float16 and bfloat16 convolutions use
// the tensor cores (CUDNN_TENSOR_OP_MATH); float32 ones are IEEE float32
// (CUDNN_FMA_MATH) unless SetTF32(true) lets them use TF32 tensor cores,
// several times faster with inputs rounded to 10 bits of mantissa.
//
// # Softmax
//
// Softmax computes softmax(x), or log softmax(x) with Log, over each
// image's channels (Channels, the classes of N×C×1×1 logits) or each
// image's C·H·W elements (Image), subtracting the largest input first so
// that nothing overflows (cudnnSoftmaxForward).
//
// # Normalization
//
// BatchNormInference applies a trained batch normalization, γ·(x −
// mean)/√(variance + ε) + β per channel, its parameters float32 Slices of
// C elements whatever x's type (cudnnBatchNormalizationForwardInference).
//
// # Attention
//
// AttentionForward is scaled dot-product attention, softmax(Scale·Q·Kᵀ)·V
// with an optional causal mask, for float16 and bfloat16 tensors packed
// batch, head, sequence, head dimension: one fused kernel that cuDNN
// chooses for a graph built through its backend API, kept per shape in
// the handle.
//
// # Work and errors
//
// Every call queues its work on the handle's stream and returns:
// synchronize the stream, or copy on it, to see the results. Errors from
// cuDNN carry its status (errors.Is(err, cudnn.CUDNN_STATUS_NOT_SUPPORTED))
// and the function that failed, in a *cuda.LibraryError; a missing
// library matches cudnn.ErrNoLibrary. cuDNN is loaded on first use
// (libcudnn.so.9, or the file GOCUDA_LIBCUDNN names): a program that
// never makes a Handle needs no cuDNN. There is no fake cuDNN: on package
// cudatest's fake driver New fails (no cuDNN, or one that finds no GPU),
// while ConvOutput and every call's checks of its arguments work as on a
// GPU.
package dnn
