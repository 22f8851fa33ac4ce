// Package nvrtctest finds an NVRTC library for tests: the one the header
// cache holds (headers/fetch extracts it from Debian's libnvrtc package,
// checksum-pinned in headers/versions.json), so that CI without a GPU or a
// toolkit compiles for real.
package nvrtctest

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gocuda/gocuda/internal/manifest"
)

// Env is the variable package generated/nvrtc reads the library path from.
const Env = "GOCUDA_LIBNVRTC"

// UseCached points Env at the cached NVRTC library of CUDA major version
// major, verified against its pinned SHA-256, unless Env is already set.
// It returns the path used, or "" when the cache has none; then the
// system's library, if any, is what loads.
func UseCached(major int) string {
	if p := os.Getenv(Env); p != "" {
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		return ""
	}
	m, err := manifest.Load(filepath.Join(root, "headers", "versions.json"))
	if err != nil {
		return ""
	}
	for _, v := range m.Versions {
		if v.Number()/1000 != major {
			continue
		}
		dir, err := v.LibraryDir()
		if err != nil {
			continue
		}
		for _, l := range v.Libraries {
			if !strings.HasPrefix(l.Name, "libnvrtc.so.") {
				continue
			}
			p := filepath.Join(dir, l.Name)
			if manifest.VerifyFile(p, l.SHA256) == nil {
				os.Setenv(Env, p)
				return p
			}
		}
	}
	return ""
}

// Required reports whether the tests must find the library rather than
// skip: GOCUDA_TEST_NVRTC=required (as CI sets it) and the manifest pins a
// library for CUDA major (CI's cache holds only those).
func Required(major int) bool {
	if os.Getenv("GOCUDA_TEST_NVRTC") != "required" {
		return false
	}
	root, err := moduleRoot()
	if err != nil {
		return true
	}
	m, err := manifest.Load(filepath.Join(root, "headers", "versions.json"))
	if err != nil {
		return true
	}
	for _, v := range m.Versions {
		if v.Number()/1000 != major {
			continue
		}
		for _, l := range v.Libraries {
			if strings.HasPrefix(l.Name, "libnvrtc.so.") {
				return true
			}
		}
	}
	return false
}

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
