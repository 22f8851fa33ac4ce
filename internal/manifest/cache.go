package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

// ReadHeader returns the cached main header (cuda.h, nccl.h) of v and its path, after checking its
// SHA-256. A header that is missing wraps ErrNotCached; one that does not
// match is a *ChecksumError.
func (v Version) ReadHeader() (data []byte, path string, err error) {
	return v.readCached(v.MainHeader(), v.SHA256)
}

// ReadLibraryHeader returns the cached library header name ("nvrtc.h") of
// v and its path, checked as ReadHeader checks cuda.h. A header the version
// does not list is an error.
func (v Version) ReadLibraryHeader(name string) (data []byte, path string, err error) {
	h, ok := v.Header(name)
	if !ok {
		return nil, "", fmt.Errorf("%s provides no %s in headers/versions.json", v.Name(), name)
	}
	return v.readCached(h.Name, h.SHA256)
}

func (v Version) readCached(name, sum string) (data []byte, path string, err error) {
	path, err = v.CachedPath(name)
	if err != nil {
		return nil, "", err
	}
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, fmt.Errorf("%s: %w at %s (run `make headers`)", v.Name(), ErrNotCached, path)
	}
	if err != nil {
		return nil, path, err
	}
	if err := Verify(path, data, sum); err != nil {
		return nil, path, fmt.Errorf("%s: %w", v.Name(), err)
	}
	return data, path, nil
}

// VerifyFile checks a file against a pinned SHA-256 without reading it into
// memory: package archives are close to a gigabyte.
func VerifyFile(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return &ChecksumError{What: path, Got: got, Want: want}
	}
	return nil
}

// WriteHeader stores data as v's cached main header and returns its path. Data
// whose SHA-256 is not v's is refused with a *ChecksumError, leaving the cache
// untouched. The file is renamed into place so that a reader never sees a
// partial header.
func (v Version) WriteHeader(data []byte) (string, error) {
	return v.WriteCached(v.MainHeader(), data, v.SHA256)
}

// WriteCached stores data as the file name ("nvrtc.h", "lib/libnvrtc.so.12")
// of v's cache after checking it against sum, as WriteHeader does.
func (v Version) WriteCached(name string, data []byte, sum string) (string, error) {
	path, err := v.CachedPath(name)
	if err != nil {
		return "", err
	}
	if err := Verify(v.Name()+" "+name, data, sum); err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+"-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp's 0600 would hide the header from other users of a shared cache.
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}
