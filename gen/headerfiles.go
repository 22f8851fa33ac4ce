package main

import (
	"sync"

	"github.com/gocuda/gocuda/internal/manifest"
)

// headerFiles reads the cached headers of one generator run, each file
// once. Every library of a CUDA version is parsed with the whole of that
// version's pinned header set, and every NCCL version with the default CUDA
// version's, so without it each file would be read and its SHA-256 checked
// once per library, and more for the default version.
//
// It is made per run rather than per process, so that it never outlives the
// cache directory it read (tests point GOCUDA_HEADER_CACHE elsewhere).
type headerFiles struct {
	mu    sync.Mutex
	files map[headerKey][]byte
}

// headerKey names a cached file by its path, which holds the cache
// directory, the version and the name, and by the SHA-256 it was checked
// against.
type headerKey struct{ path, sha256 string }

func newHeaderFiles() *headerFiles {
	return &headerFiles{files: map[headerKey][]byte{}}
}

// read returns the cached header name of v and its path, as
// readCachedHeader does, from memory after the first time. The bytes are
// shared by every caller: none may modify them.
func (c *headerFiles) read(v manifest.Version, name string) ([]byte, string, error) {
	sum := v.SHA256
	if name != v.MainHeader() {
		h, ok := v.Header(name)
		if !ok {
			return readCachedHeader(v, name) // its error names what is missing
		}
		sum = h.SHA256
	}
	path, err := v.CachedPath(name)
	if err != nil {
		return nil, "", err
	}
	key := headerKey{path, sum}
	c.mu.Lock()
	data, ok := c.files[key]
	c.mu.Unlock()
	if ok {
		return data, path, nil
	}
	// Errors are not kept: each one ends the run, or skips a version
	// whose header is not cached, which a later library may skip too.
	data, path, err = readCachedHeader(v, name)
	if err != nil {
		return nil, path, err
	}
	c.mu.Lock()
	c.files[key] = data
	c.mu.Unlock()
	return data, path, nil
}

// readCachedHeader reads the cached header name of v from disk and checks
// it against its pinned SHA-256.
func readCachedHeader(v manifest.Version, name string) ([]byte, string, error) {
	if name == v.MainHeader() {
		return v.ReadHeader()
	}
	return v.ReadLibraryHeader(name)
}
