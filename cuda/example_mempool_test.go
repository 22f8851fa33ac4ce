package cuda_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
)

// A memory pool of one's own for stream-ordered allocations: memory freed
// on the stream stays reserved in the pool, up to its release threshold,
// for the next allocation, instead of going back to the device each time
// the stream synchronizes. DefaultMemPool is the device's own pool, the one
// AllocAsync allocates from.
func ExampleNewMemPool() {
	ctx := primary()
	defer ctx.Close()
	dev := ctx.Device()
	if ok, err := dev.SupportsMemoryPools(); err != nil || !ok {
		log.Fatalf("device without memory pools (%v)", err)
	}
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	pool, err := cuda.NewMemPool(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // the pool is destroyed once its allocations are freed too
	if err := pool.SetReleaseThreshold(1 << 30); err != nil {
		log.Fatal(err)
	}

	const size = 64 << 20
	for range 4 {
		m, err := cuda.AllocFromPool(s, pool, size)
		if err != nil {
			log.Fatal(err)
		}
		if err := m.MemsetD8Async(s, 1); err != nil {
			log.Fatal(err)
		}
		m.Close() // freed on s after the memset: the next allocation can reuse it
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	u, err := pool.Usage()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("in use:", u.Used)                        // 0
	fmt.Println("kept for reuse:", u.Reserved >= size)    // true
	fmt.Println("peak, one or more:", u.UsedHigh >= size) // true
	if err := pool.Trim(0); err != nil {                  // give back all the pool holds unused
		log.Fatal(err)
	}
	if u, err = pool.Usage(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("kept after Trim(0):", u.Reserved) // 0

	def, err := cuda.DefaultMemPool(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer def.Close() // never destroys the device's pool
	m, err := cuda.AllocAsync(s, size)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	du, err := def.Usage()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("AllocAsync uses the default pool:", du.Used >= size) // true
	// Output:
	// in use: 0
	// kept for reuse: true
	// peak, one or more: true
	// kept after Trim(0): 0
	// AllocAsync uses the default pool: true
}
