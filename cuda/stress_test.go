package cuda

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// Test 5: 64 goroutines create, clone, use and close streams and events on
// two contexts of one device. Goroutines move between OS threads all the
// while, so a call that did not bind its own context would create objects
// in the wrong one (or none); every stream is checked against the driver,
// and nothing may be left alive.
func TestConcurrentStreamsAndEvents(t *testing.T) {
	dev, primary := needGPU(t)
	c0, s0, e0 := LiveHandles()
	created, err := NewContext(dev)
	must(t, err)
	ctxs := [2]*Context{primary, created}
	// One queue shared by every goroutine, cloned and closed concurrently.
	common, err := NewStream(primary)
	must(t, err)

	goroutines, iterations := 64, 1000
	if testing.Short() {
		iterations = 50
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iterations {
				if err := stressOnce(ctxs[(g+i)%2], common, i); err != nil {
					t.Errorf("goroutine %d, iteration %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	must(t, common.Synchronize())
	must(t, common.Close())
	must(t, created.Close())
	if c, s, e := LiveHandles(); c != c0 || s != s0 || e != e0 {
		t.Fatalf("live contexts, streams, events = %d, %d, %d; want %d, %d, %d", c, s, e, c0, s0, e0)
	}
}

func stressOnce(parent *Context, common *Stream, i int) (err error) {
	// The context handle used to create is closed before the objects made
	// in it, so the objects' own references are what keeps it alive.
	ctx, err := parent.Clone()
	if err != nil {
		return err
	}
	s, err := NewStream(ctx)
	if err != nil {
		ctx.Close()
		return err
	}
	ev, err := NewEvent(ctx)
	ctx.Close()
	if err != nil {
		s.Close()
		return err
	}
	defer func() {
		// Close in an order that changes with i.
		if i%2 == 0 {
			err = errors.Join(err, s.Close(), ev.Close())
		} else {
			err = errors.Join(err, ev.Close(), s.Close())
		}
	}()
	s2, err := s.Clone()
	if err != nil {
		return err
	}
	defer s2.Close()
	ev2, err := ev.Clone()
	if err != nil {
		return err
	}
	defer ev2.Close()
	shared, err := common.Clone()
	if err != nil {
		return err
	}
	defer shared.Close()

	var got cu.CUcontext
	if err := cu.StreamGetCtx(s2.Raw(), &got); err != nil {
		return err
	}
	if got != parent.Raw() || s.Context().Raw() != parent.Raw() || ev.Context().Raw() != parent.Raw() {
		return fmt.Errorf("stream in context %#x, want %#x", got, parent.Raw())
	}
	if err := ev.Record(s2); err != nil {
		return err
	}
	if err := s.WaitEvent(ev2); err != nil {
		return err
	}
	// A wait across contexts is allowed: events order any streams of a
	// device.
	if err := shared.WaitEvent(ev); err != nil {
		return err
	}
	if i%64 == 0 {
		if err := s2.Synchronize(); err != nil {
			return err
		}
		if err := ev2.Synchronize(); err != nil {
			return err
		}
		if _, err := ev.Query(); err != nil {
			return err
		}
	}
	return nil
}
