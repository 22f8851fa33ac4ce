//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
)

// The shape of a convolution's output, and the checks every call makes,
// need neither a GPU nor cuDNN.
func ExampleConvOutput() {
	// 8 images of 64 channels of 56×56 pixels, 128 filters of 3×3.
	x := dnn.NewTensor[cuda.Float16](nil, dnn.NHWC, 8, 64, 56, 56)
	w := dnn.NewFilter[cuda.Float16](nil, dnn.NHWC, 128, 64, 3, 3)

	n, k, p, q, err := dnn.ConvOutput(dnn.Conv{PadH: 1, PadW: 1, StrideH: 2, StrideW: 2}, x, w)
	fmt.Println(n, k, p, q, err)

	// Grouped: 4 groups of 16 channels, so the filters have 16 channels.
	_, _, _, _, err = dnn.ConvOutput(dnn.Conv{Groups: 4}, x, w)
	fmt.Println(err)
	// Output:
	// 8 128 28 28 <nil>
	// dnn: ConvOutput: x has 64 channels but w has 64 per group in 4 group(s): 256 needed
}

// A convolution on a GPU: a handle on a stream, the tensors in Slices,
// and the result copied back on the stream.
func ExampleConvForward() {
	s, err := cuda.OpenStream(0)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	h, err := dnn.New(s)
	if err != nil {
		log.Fatal(err) // no cuDNN: errors.Is(err, cudnn.ErrNoLibrary)
	}
	defer h.Close()

	xs, err := cuda.AllocSliceFrom(s, make([]float32, 1*3*32*32))
	if err != nil {
		log.Fatal(err)
	}
	defer xs.Close()
	ws, err := cuda.AllocSliceFrom(s, make([]float32, 16*3*3*3))
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	x := dnn.NewTensor(xs, dnn.NCHW, 1, 3, 32, 32)
	w := dnn.NewFilter(ws, dnn.NCHW, 16, 3, 3, 3)
	c := dnn.Conv{PadH: 1, PadW: 1}

	n, k, p, q, err := dnn.ConvOutput(c, x, w)
	if err != nil {
		log.Fatal(err)
	}
	ys, err := cuda.AllocSlice[float32](s, n*k*p*q)
	if err != nil {
		log.Fatal(err)
	}
	defer ys.Close()
	y := dnn.NewTensor(ys, dnn.NCHW, n, k, p, q)
	if err := dnn.ConvForward(h, c, x, w, y); err != nil {
		log.Fatal(err)
	}
	out := make([]float32, ys.Len())
	if err := ys.CopyToHost(s, out); err != nil { // in stream order, after the convolution
		log.Fatal(err)
	}
	fmt.Println(len(out))
}
