package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotCached reports that a version's header is not in the cache.
var ErrNotCached = errors.New("header not cached")

// ChecksumError reports content whose SHA-256 is not the pinned one.
type ChecksumError struct {
	What      string // what was checked, e.g. a path
	Got, Want string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s: SHA-256 mismatch: got %s, want %s", e.What, e.Got, e.Want)
}

// Verify checks data against a pinned SHA-256.
func Verify(what string, data []byte, want string) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return &ChecksumError{What: what, Got: got, Want: want}
	}
	return nil
}

// ReadHeader returns the cached cuda.h of v and its path, after checking its
// SHA-256. A header that is missing wraps ErrNotCached; one that does not
// match is a *ChecksumError.
func (v Version) ReadHeader() (data []byte, path string, err error) {
	path, err = v.HeaderPath()
	if err != nil {
		return nil, "", err
	}
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, fmt.Errorf("CUDA %s: %w at %s (run `make headers`)", v.Version, ErrNotCached, path)
	}
	if err != nil {
		return nil, path, err
	}
	if err := Verify(path, data, v.SHA256); err != nil {
		return nil, path, fmt.Errorf("CUDA %s: %w", v.Version, err)
	}
	return data, path, nil
}
