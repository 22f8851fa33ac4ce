// Package fakelib is what the fake libraries of internal/ (fakecurand,
// fakecufft, fakecusolver, fakecusparse, fakecufile) share: each is C
// built at test time with internal/cbuild, loaded by its raw package
// through that package's LibraryEnv, and told from the real library by
// a marker symbol, <Name>_marker, that only the fake defines.
package fakelib

import (
	"embed"
	"os"
	"strconv"

	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/dynlib"
)

//go:embed csrc/*.c csrc/*.h
var shared embed.FS

// CSources are the C the fakes share, for a fake's Library.Shared: a
// registry of live objects by kind (csrc/objects.h) and the lookup of the
// fake driver (csrc/driver.h).
var CSources = cbuild.Sources{FS: shared, Dir: "csrc"}

// Fake describes one fake library.
type Fake struct {
	// Library is the build; its Name prefixes the marker symbol.
	cbuild.Library
	// Env is the raw package's LibraryEnv, which Setup points at the fake.
	Env string
	// VersionEnv, where not empty, is the variable whose value the fake
	// reports as its version; Setup sets it to Version unless it is set.
	VersionEnv string
	Version    int
	// Load and Path are the raw package's Load and LibraryPath.
	Load func() error
	Path func() string
}

// Build compiles the fake into dir (empty: a directory of the user's
// under os.TempDir()) and returns the library's path; a build is reused
// until the sources, compiler or flags change.
func (f *Fake) Build(dir string) (string, error) { return f.Library.Build(dir) }

// Setup builds the fake, sets VersionEnv unless it is set, and points Env
// at the fake. Call it before anything in the process calls the raw
// package, which opens its library once, and only where the process uses
// the fake CUDA driver, whose device memory the fakes take for host
// memory.
func (f *Fake) Setup() (string, error) {
	path, err := f.Build("")
	if err != nil {
		return "", err
	}
	if f.VersionEnv != "" && os.Getenv(f.VersionEnv) == "" {
		if err := os.Setenv(f.VersionEnv, strconv.Itoa(f.Version)); err != nil {
			return "", err
		}
	}
	return path, os.Setenv(f.Env, path)
}

// Is reports whether the library at path is this fake.
func (f *Fake) Is(path string) bool { return dynlib.Exports(path, f.Name+"_marker") }

// Active reports whether the raw package loaded this fake (loading the
// library if it has not).
func (f *Fake) Active() bool { return f.Load() == nil && f.Is(f.Path()) }
