// Package dropped counts the handles of package cuda that were never
// closed and that the garbage collector's cleanup released, by kind of
// object, so that package cudatest can report them as the leaks they are
// in a test. It imports nothing of the module, so both can import it.
package dropped

import (
	"sort"
	"strconv"
	"strings"
	"sync"
)

var (
	mu     sync.Mutex
	counts = map[string]int{}
)

// Add counts one handle of kind released by the garbage collector.
func Add(kind string) {
	mu.Lock()
	counts[kind]++
	mu.Unlock()
}

// Counts returns the handles released by the garbage collector so far,
// by kind.
func Counts() map[string]int {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]int, len(counts))
	for k, n := range counts {
		out[k] = n
	}
	return out
}

// Since describes the handles released by the garbage collector after
// before was taken ("event 1, stream 2"), "" when there are none.
func Since(before map[string]int) string {
	var parts []string
	for k, n := range Counts() {
		if d := n - before[k]; d > 0 {
			parts = append(parts, k+" "+strconv.Itoa(d))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
