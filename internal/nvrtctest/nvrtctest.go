// Package nvrtctest finds an NVRTC library for tests: the one the header
// cache holds (headers/fetch extracts it from Debian's libnvrtc package,
// checksum-pinned in headers/versions.json), so that CI without a GPU or a
// toolkit compiles for real.
package nvrtctest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/internal/manifest"
)

// Env is the variable package generated/nvrtc reads the library path from.
const Env = "GOCUDA_LIBNVRTC"

// UseCached points Env at the cached NVRTC library of CUDA major version
// major, verified against its pinned SHA-256, unless Env is already set.
// It returns the path used, or "" when the cache has none; then the
// system's library, if any, is what loads.
func UseCached(major int) string { return UseCachedLibrary(Env, "libnvrtc.so.", major) }

// UseCachedLibrary is UseCached for the library whose cached name starts
// with prefix ("libnvJitLink.so."), whose package reads env.
func UseCachedLibrary(env, prefix string, major int) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	pins, err := pinned(major, prefix)
	if err != nil {
		return ""
	}
	for _, p := range pins {
		if manifest.VerifyFile(p.path, p.sha256) == nil {
			os.Setenv(env, p.path)
			return p.path
		}
	}
	return ""
}

// Required reports whether the tests must find the library rather than
// skip: GOCUDA_TEST_NVRTC=required (as CI sets it) and the manifest pins a
// library for CUDA major (CI's cache holds only those).
func Required(major int) bool { return RequiredLibrary("libnvrtc.so.", major) }

// RequiredLibrary is Required for the library whose cached name starts
// with prefix.
func RequiredLibrary(prefix string, major int) bool {
	if os.Getenv("GOCUDA_TEST_NVRTC") != "required" {
		return false
	}
	pins, err := pinned(major, prefix)
	return err != nil || len(pins) > 0
}

// pin is a library the manifest pins: where the cache keeps it, and its
// SHA-256.
type pin struct{ path, sha256 string }

// pinned lists the libraries named prefix* the manifest pins for CUDA
// major.
func pinned(major int, prefix string) ([]pin, error) {
	m, err := loadManifest()
	if err != nil {
		return nil, err
	}
	var pins []pin
	for _, v := range m.Versions {
		if v.Number()/1000 != major {
			continue
		}
		// Without a cache directory a pin still counts (Required), and
		// its path verifies as nothing (UseCached).
		dir, _ := v.LibraryDir()
		for _, l := range v.Libraries {
			if strings.HasPrefix(l.Name, prefix) {
				pins = append(pins, pin{filepath.Join(dir, l.Name), l.SHA256})
			}
		}
	}
	return pins, nil
}

// loadManifest reads the module's manifest once per test process.
var loadManifest = sync.OnceValues(func() (*manifest.Manifest, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	return manifest.Load(filepath.Join(root, "headers", "versions.json"))
})

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
