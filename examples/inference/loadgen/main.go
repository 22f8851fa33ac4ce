// Command loadgen drives an inference service (examples/inference, or
// bench/python/inference_server.py: the same protocol) with load on the
// loopback, and prints one machine-readable line per run:
//
//	RESULT impl=go mode=open target_rps=1000 clients=0 duration_s=5 sent=... ok=... err=... dropped=... mismatch=... rps=... p50_us=... p90_us=... p99_us=... max_us=... mean_batch=...
//
// Open loop (-rate R): requests leave at R per second whatever the
// answers, and a request's latency counts from when it was due, so that a
// service that falls behind shows its queue; at most -inflight are
// outstanding (over that a request is dropped, not sent). Closed loop
// (-clients N): N clients, each sending its next request when the last is
// answered. Only the requests due after -warmup count; rps is the answers
// received within the measured -duration per second. Every answer is
// compared with the first answer to the same input (mismatch counts those
// that differ by more than 0.1), which batching must not change.
//
//	go run ./examples/inference/loadgen -rate 2000 -duration 5s
//	go run ./examples/inference/loadgen -clients 64 -impl python -url http://127.0.0.1:8081
//
// -ready T first waits up to T for /healthz. -check FILE sends fixed
// inputs and saves the answers in FILE, or, when FILE exists, compares the
// answers with it and prints a CHECK line (exit status 1 if they differ):
// two services that should hold the same model can be compared.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	url, impl, check       string
	width, clients, conns  int
	inflight               int
	rate                   float64
	duration, warmup, wait time.Duration
	timeout                time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", "http://127.0.0.1:8080", "the service")
	flag.StringVar(&c.impl, "impl", "go", "name of the service in the RESULT line")
	flag.IntVar(&c.width, "width", 1024, "floats per request, the service's width")
	flag.Float64Var(&c.rate, "rate", 0, "open loop: requests per second")
	flag.IntVar(&c.clients, "clients", 0, "closed loop: concurrent clients")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "measured time")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "load before the measured time, not counted")
	flag.IntVar(&c.conns, "conns", 512, "most connections to the service")
	flag.IntVar(&c.inflight, "inflight", 4096, "open loop: most requests outstanding")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Second, "a request's time limit")
	flag.DurationVar(&c.wait, "ready", 0, "first wait this long at most for the service's /healthz")
	flag.StringVar(&c.check, "check", "", "save the answers to fixed inputs in this file, or compare them with it")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	g := newGen(c)
	if c.wait > 0 {
		if err := g.ready(c.wait); err != nil {
			return err
		}
	}
	if c.check != "" {
		if err := g.compare(c.check); err != nil {
			return err
		}
	}
	switch {
	case c.rate > 0:
		return g.load("open")
	case c.clients > 0:
		return g.load("closed")
	}
	return nil
}

// gen is one run's inputs, client and measurements.
type gen struct {
	c      config
	client *http.Client
	bodies [][]byte // the distinct inputs, encoded

	mu        sync.Mutex
	first     [][]float32 // the first answer to each input
	lat       []time.Duration
	sent, ok  atomic.Int64
	errs      atomic.Int64
	dropped   atomic.Int64
	mismatch  atomic.Int64
	completed atomic.Int64 // answers within the measured time
}

func newGen(c config) *gen {
	t := &http.Transport{MaxIdleConns: c.conns, MaxIdleConnsPerHost: c.conns, MaxConnsPerHost: c.conns, DisableCompression: true}
	g := &gen{c: c, client: &http.Client{Transport: t, Timeout: c.timeout}}
	g.bodies = inputs(64, c.width, 42)
	g.first = make([][]float32, len(g.bodies))
	return g
}

// inputs returns n requests of width floats, encoded.
func inputs(n, width int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 2))
	out := make([][]byte, n)
	v := make([]float32, width)
	for i := range out {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i], _ = binary.Append(nil, binary.LittleEndian, v)
	}
	return out
}

func (g *gen) ready(limit time.Duration) error {
	end := time.Now().Add(limit)
	for {
		resp, err := g.client.Get(g.c.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(end) {
			return fmt.Errorf("%s not ready after %v: %v", g.c.url, limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// infer sends input i and returns the answer.
func (g *gen) infer(ctx context.Context, i int) ([]float32, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", g.c.url+"/infer", bytes.NewReader(g.bodies[i]))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || len(raw) != 4*g.c.width {
		return nil, fmt.Errorf("%s, %d bytes: %.100q", resp.Status, len(raw), raw)
	}
	out := make([]float32, g.c.width)
	_, err = binary.Decode(raw, binary.LittleEndian, out)
	return out, err
}

// one sends request k, due at due, and records it if it counts.
func (g *gen) one(k int, due, from, to time.Time) {
	i := k % len(g.bodies)
	out, err := g.infer(context.Background(), i)
	now := time.Now()
	measured := !due.Before(from) && due.Before(to)
	if measured {
		g.sent.Add(1)
	}
	if err != nil {
		if measured {
			if g.errs.Add(1) == 1 {
				fmt.Fprintln(os.Stderr, "loadgen: first error:", err)
			}
		}
		return
	}
	if !now.Before(from) && now.Before(to) {
		g.completed.Add(1)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.first[i] == nil {
		g.first[i] = out
	} else if !(maxDiff(out, g.first[i]) <= 0.1) {
		g.mismatch.Add(1)
	}
	if measured {
		g.ok.Add(1)
		g.lat = append(g.lat, now.Sub(due))
	}
}

func (g *gen) load(mode string) error {
	start := time.Now()
	from, to := start.Add(g.c.warmup), start.Add(g.c.warmup+g.c.duration)
	// The service's counters at both ends of the measured time.
	var before, after stats
	sampled := make(chan struct{})
	go func() {
		time.Sleep(time.Until(from))
		before, _ = g.stats()
		time.Sleep(time.Until(to))
		after, _ = g.stats()
		close(sampled)
	}()
	var wg sync.WaitGroup
	if mode == "open" {
		var inflight atomic.Int64
		interval := time.Duration(float64(time.Second) / g.c.rate)
		for k := 0; ; k++ {
			due := start.Add(time.Duration(k) * interval)
			if !due.Before(to) {
				break
			}
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
			if inflight.Load() >= int64(g.c.inflight) {
				if !due.Before(from) {
					g.dropped.Add(1)
				}
				continue
			}
			inflight.Add(1)
			wg.Go(func() {
				defer inflight.Add(-1)
				g.one(k, due, from, to)
			})
		}
	} else {
		var k atomic.Int64
		for range g.c.clients {
			wg.Go(func() {
				for due := time.Now(); due.Before(to); due = time.Now() {
					g.one(int(k.Add(1)), due, from, to)
				}
			})
		}
	}
	<-sampled
	wg.Wait()

	slices.Sort(g.lat)
	pct := func(p float64) int64 {
		if len(g.lat) == 0 {
			return 0
		}
		return g.lat[min(len(g.lat)-1, int(p*float64(len(g.lat))))].Microseconds()
	}
	meanBatch := 0.0
	if n := after.Batches - before.Batches; n > 0 {
		meanBatch = float64(after.Requests-before.Requests) / float64(n)
	}
	fmt.Printf("RESULT impl=%s mode=%s target_rps=%g clients=%d duration_s=%g sent=%d ok=%d err=%d dropped=%d mismatch=%d rps=%.0f p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_batch=%.2f\n",
		g.c.impl, mode, g.c.rate, g.c.clients, g.c.duration.Seconds(), g.sent.Load(), g.ok.Load(), g.errs.Load(), g.dropped.Load(), g.mismatch.Load(),
		float64(g.completed.Load())/g.c.duration.Seconds(), pct(0.5), pct(0.9), pct(0.99), pct(1), meanBatch)
	return nil
}

type stats struct{ Requests, Batches int64 }

// stats reads the service's counters; zero if it has none.
func (g *gen) stats() (stats, error) {
	var s stats
	resp, err := g.client.Get(g.c.url + "/stats")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

// compare sends 16 fixed inputs one by one and saves the answers in
// file, or compares them with those file holds.
func (g *gen) compare(file string) error {
	var got []float32
	for i := range 16 {
		out, err := g.infer(context.Background(), i)
		if err != nil {
			return err
		}
		got = append(got, out...)
	}
	saved, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		raw, _ := binary.Append(nil, binary.LittleEndian, got)
		return os.WriteFile(file, raw, 0o644)
	}
	if err != nil {
		return err
	}
	want := make([]float32, len(saved)/4)
	if _, err := binary.Decode(saved, binary.LittleEndian, want); err != nil || len(want) != len(got) {
		return fmt.Errorf("%s holds %d floats, want %d (%v)", file, len(want), len(got), err)
	}
	var sum float64
	for j := range got {
		sum += math.Abs(float64(got[j] - want[j]))
	}
	worst := maxDiff(got, want)
	fmt.Printf("CHECK impl=%s against=%s max_abs_diff=%.4g mean_abs_diff=%.3g same=%v\n", g.c.impl, file, worst, sum/float64(len(got)), worst <= 0.25)
	if !(worst <= 0.25) {
		return fmt.Errorf("the answers differ from %s by up to %.3g", file, worst)
	}
	return nil
}

func maxDiff(a, b []float32) float64 {
	var m float64
	for j := range a {
		m = max(m, math.Abs(float64(a[j]-b[j])))
	}
	return m
}
