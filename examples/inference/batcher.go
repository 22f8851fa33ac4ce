package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Batcher gathers concurrent requests into batches: a batch leaves when it
// has Max requests, or when Wait has passed since its first request
// arrived, whichever comes first. Requests that queued while the last
// batch ran join at once, without waiting for the deadline: under load the
// batches fill up, and a lone request waits at most Wait.
type Batcher struct {
	Max  int
	Wait time.Duration
	// Run computes the outputs of a batch: out[i] for in[i].
	Run func(in, out [][]float32) error

	queue            chan *request
	stopped          chan struct{} // closed when Loop returns
	Batches, Handled atomic.Int64  // batches run, requests answered
}

type request struct {
	in, out []float32
	arrived time.Time
	done    chan error
}

// ErrStopped is the error of a request made after Loop returned.
var ErrStopped = errors.New("batcher stopped")

// NewBatcher returns a batcher of batches of at most max requests, each
// waiting at most wait for more, computed by run. Loop runs them.
func NewBatcher(max int, wait time.Duration, run func(in, out [][]float32) error) *Batcher {
	return &Batcher{Max: max, Wait: wait, Run: run, queue: make(chan *request, 4*max), stopped: make(chan struct{})}
}

// Do queues in and returns its output, once its batch has run.
func (b *Batcher) Do(ctx context.Context, in []float32) ([]float32, error) {
	r := &request{in: in, out: make([]float32, len(in)), arrived: time.Now(), done: make(chan error, 1)}
	select {
	case b.queue <- r:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.stopped:
		return nil, ErrStopped
	}
	select {
	case err := <-r.done:
		return r.out, err
	case <-ctx.Done(): // the batch still runs; its answer is dropped
		return nil, ctx.Err()
	case <-b.stopped:
		return nil, ErrStopped
	}
}

// Loop runs batches until ctx is done, then fails the requests still
// queued, and those made later, with ErrStopped.
func (b *Batcher) Loop(ctx context.Context) {
	defer close(b.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	in, out := make([][]float32, 0, b.Max), make([][]float32, 0, b.Max)
	for {
		batch := b.next(ctx, timer)
		if batch == nil {
			break
		}
		in, out = in[:0], out[:0]
		for _, r := range batch {
			in, out = append(in, r.in), append(out, r.out)
		}
		err := b.Run(in, out)
		b.Batches.Add(1)
		b.Handled.Add(int64(len(batch)))
		for _, r := range batch {
			r.done <- err
		}
	}
	for {
		select {
		case r := <-b.queue:
			r.done <- ErrStopped
		default:
			return
		}
	}
}

// next returns the next batch, or nil once ctx is done.
func (b *Batcher) next(ctx context.Context, timer *time.Timer) []*request {
	var first *request
	select {
	case first = <-b.queue:
	case <-ctx.Done():
		return nil
	}
	batch := []*request{first}
	deadline := first.arrived.Add(b.Wait)
	for len(batch) < b.Max {
		// Those already queued join first: a deadline that has passed
		// must not cut the batch short of them.
		select {
		case r := <-b.queue:
			batch = append(batch, r)
			continue
		default:
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		timer.Reset(left)
		select {
		case r := <-b.queue:
			batch = append(batch, r)
			timer.Stop()
		case <-timer.C:
			return batch
		case <-ctx.Done():
			timer.Stop()
			return batch
		}
	}
	return batch
}
