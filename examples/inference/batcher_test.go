package main

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is a batch function that doubles each input and records the
// sizes of the batches it was given; gate, when set, holds each batch
// until it is received from.
type recorder struct {
	mu    sync.Mutex
	sizes []int
	gate  chan struct{}
}

func (r *recorder) run(in, out [][]float32) error {
	r.mu.Lock()
	r.sizes = append(r.sizes, len(in))
	r.mu.Unlock()
	if r.gate != nil {
		<-r.gate
	}
	for i := range in {
		for j, v := range in[i] {
			out[i][j] = 2 * v
		}
	}
	return nil
}

func (r *recorder) batches() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sizes)
}

// start runs b's loop until the test ends.
func start(t *testing.T, b *Batcher) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Loop(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// submit makes n requests at once, request i of the value base+i, and
// checks that each gets its own answer.
func submit(t *testing.T, b *Batcher, n int, base float32) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v := base + float32(i)
			out, err := b.Do(context.Background(), []float32{v, -v})
			if err != nil {
				t.Error(err)
				return
			}
			if out[0] != 2*v || out[1] != -2*v {
				t.Errorf("request of %v got %v, want [%v %v]", v, out, 2*v, -2*v)
			}
		})
	}
	wg.Wait()
}

func TestBatcherSendsAFullBatchWithoutWaiting(t *testing.T) {
	r := &recorder{}
	b := NewBatcher(4, time.Hour, r.run)
	start(t, b)
	// With an hour's wait, only full batches can leave.
	submit(t, b, 8, 1)
	if got := r.batches(); !slices.Equal(got, []int{4, 4}) {
		t.Errorf("batches of %v, want [4 4]", got)
	}
	if b.Batches.Load() != 2 || b.Handled.Load() != 8 {
		t.Errorf("counted %d batches and %d requests, want 2 and 8", b.Batches.Load(), b.Handled.Load())
	}
}

func TestBatcherSendsAPartialBatchAtTheDeadline(t *testing.T) {
	const wait = 200 * time.Millisecond
	r := &recorder{}
	b := NewBatcher(32, wait, r.run)
	start(t, b)
	t0 := time.Now()
	submit(t, b, 1, 1)
	if el := time.Since(t0); el < wait || el > wait+2*time.Second {
		t.Errorf("a lone request was answered after %v, want just after %v", el, wait)
	}
	// Requests that arrive within the wait of the first go together.
	submit(t, b, 3, 10)
	if got := r.batches(); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("batches of %v, want [1 3]", got)
	}
}

func TestBatcherTakesQueuedRequestsAfterTheirDeadline(t *testing.T) {
	r := &recorder{gate: make(chan struct{})}
	b := NewBatcher(4, 10*time.Millisecond, r.run)
	start(t, b)
	var wg sync.WaitGroup
	wg.Go(func() { submit(t, b, 1, 1) })
	for len(r.batches()) == 0 {
		time.Sleep(time.Millisecond)
	}
	// The first batch runs, held by the gate; five more queue, and their
	// deadlines pass before it ends.
	wg.Go(func() { submit(t, b, 5, 10) })
	for len(b.queue) < 5 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	go func() {
		for range 3 {
			r.gate <- struct{}{}
		}
	}()
	wg.Wait()
	if got := r.batches(); !slices.Equal(got, []int{1, 4, 1}) {
		t.Errorf("batches of %v, want [1 4 1]: the queued requests should fill the next batch", got)
	}
}

func TestBatcherRefusesRequestsOnceStopped(t *testing.T) {
	r := &recorder{}
	b := NewBatcher(4, time.Millisecond, r.run)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Loop(ctx); close(done) }()
	submit(t, b, 2, 1)
	cancel()
	<-done
	if _, err := b.Do(context.Background(), []float32{1}); !errors.Is(err, ErrStopped) {
		t.Errorf("Do after Loop returned: %v, want ErrStopped", err)
	}
}
