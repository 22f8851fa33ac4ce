// Command inference is an HTTP service that runs a small model on the GPU
// for each request, batching concurrent requests dynamically: a batch
// leaves when it has -batch requests, or -wait after its first request
// arrived. The model (see Model) is -layers transformer-style MLP layers
// of width -width in bfloat16, with random weights from a fixed seed:
// cuBLASLt multiplies with bias and GELU epilogues, the residual add and
// layernorm a kernel that NVRTC compiles at start-up, and one CUDA graph
// per batch size, so that a batch is one graph launch.
//
//	go run ./examples/inference [-addr 127.0.0.1:8080] [-batch 32] [-wait 2ms] [-layers 4] [-width 1024]
//
// POST /infer with a body of -width little-endian float32s (4·width bytes,
// application/octet-stream) answers the model's output in the same form.
// GET /healthz answers once the model is ready, GET /stats the requests
// and batches run so far as JSON. SIGINT or SIGTERM stops it after the
// requests in flight.
//
// examples/inference/loadgen drives it with load; bench/python/inference_server.py
// is the same service in PyTorch, and bench/inference.sh compares the two.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	batch := flag.Int("batch", 32, "largest batch")
	wait := flag.Duration("wait", 2*time.Millisecond, "longest a batch waits for more requests after its first")
	layers := flag.Int("layers", 4, "layers of the model")
	width := flag.Int("width", 1024, "width of the model: floats per request")
	seed := flag.Uint64("seed", 1, "seed of the weights")
	device := flag.Int("device", 0, "device ordinal")
	flag.Parse()
	cfg := Config{D: *width, Layers: *layers, MaxBatch: *batch, Seed: *seed}
	if err := run(*device, cfg, *addr, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "inference:", err)
		os.Exit(1)
	}
}

func run(device int, cfg Config, addr string, wait time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	m, err := NewModel(device, cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Warm(); err != nil {
		return err
	}
	// The model's own time per batch, to read the service's latencies against.
	for _, n := range []int{1, cfg.MaxBatch} {
		t, err := batchTime(m, n, cfg.D)
		if err != nil {
			return err
		}
		log.Printf("inference: a batch of %d takes %v, copies in and out included (median of 21)", n, t.Round(time.Microsecond))
	}
	b := NewBatcher(cfg.MaxBatch, wait, m.Forward)
	loop, stopLoop := context.WithCancel(context.Background())
	looped := make(chan struct{})
	go func() { b.Loop(loop); close(looped) }()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		stopLoop()
		return err
	}
	srv := &http.Server{Handler: Handler(b, cfg.D), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Printf("inference: width %d, %d layers, batches of up to %d (wait %v), ready in %v; listening on %s",
		cfg.D, cfg.Layers, cfg.MaxBatch, wait, time.Since(start).Round(time.Millisecond), ln.Addr())

	select {
	case <-ctx.Done():
		log.Printf("inference: shutting down after %d requests in %d batches", b.Handled.Load(), b.Batches.Load())
	case err = <-served:
	}
	// The handlers still running wait for their batches: the batcher
	// stops after them.
	timeout, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(err, srv.Shutdown(timeout))
	stopLoop()
	<-looped
	return errors.Join(err, m.Close())
}

// Handler serves /infer with b's batches of requests of d floats,
// /healthz and /stats.
func Handler(b *Batcher, d int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"requests\": %d, \"batches\": %d}\n", b.Handled.Load(), b.Batches.Load())
	})
	mux.HandleFunc("POST /infer", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, int64(4*d)+1))
		if err != nil || len(body) != 4*d {
			http.Error(w, fmt.Sprintf("want a body of %d little-endian float32s (%d bytes)", d, 4*d), http.StatusBadRequest)
			return
		}
		in := make([]float32, d)
		if _, err := binary.Decode(body, binary.LittleEndian, in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, err := b.Do(r.Context(), in)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		body, _ = binary.Append(body[:0], binary.LittleEndian, out)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	return mux
}

// batchTime is the median time of Forward on a batch of n rows.
func batchTime(m *Model, n, d int) (time.Duration, error) {
	in, out := make([][]float32, n), make([][]float32, n)
	for i := range in {
		in[i], out[i] = make([]float32, d), make([]float32, d)
	}
	times := make([]time.Duration, 21)
	for i := range times {
		t := time.Now()
		if err := m.Forward(in, out); err != nil {
			return 0, err
		}
		times[i] = time.Since(t)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
