// Package manifest reads headers/versions.json, the list of CUDA versions the
// bindings are generated for, and knows where each version's header is cached.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Source kinds.
const (
	SourceDebian  = "debian"  // a Debian package, fetched with apt
	SourceToolkit = "toolkit" // an installed CUDA toolkit ($CUDA_HOME)
	SourceFile    = "file"    // a cuda.h at a fixed path on the machine that has it
)

// Manifest is the parsed headers/versions.json.
type Manifest struct {
	Default  string    `json:"default"` // version compiled when no tag is given
	Versions []Version `json:"versions"`
}

// Version is one CUDA version of the matrix.
type Version struct {
	Version string `json:"version"` // "12.4"
	Tag     string `json:"tag"`     // build tag, "cuda12040"
	Source  Source `json:"source"`
	SHA256  string `json:"sha256"` // of cuda.h
	// Headers are the library headers the version provides besides cuda.h,
	// from the same source (one package, one toolkit).
	Headers []Header `json:"headers,omitempty"`
	// Libraries are run-time libraries that tests use without a GPU (NVRTC
	// compiles on the CPU), each from a Debian package of the version's
	// suite and component.
	Libraries []Library `json:"libraries,omitempty"`
}

// Header is a library header of a version, such as nvrtc.h.
type Header struct {
	Name   string `json:"name"` // file name in the cache: "nvrtc.h"
	Path   string `json:"path"` // where the source has it, as Source.Path
	SHA256 string `json:"sha256"`
}

// Library is a shared library cached for tests, such as libnvrtc.so.12.
type Library struct {
	Name           string `json:"name"` // file name in the cache: the soname the loader opens
	Arch           string `json:"arch"` // Debian architecture of the package: "amd64"
	Package        string `json:"package"`
	PackageVersion string `json:"package_version"`
	PackageSHA256  string `json:"package_sha256"`
	Path           string `json:"path"` // inside the package
	SHA256         string `json:"sha256"`
}

// Source says where a version's cuda.h comes from.
type Source struct {
	Kind           string `json:"kind"`
	Package        string `json:"package,omitempty"`
	PackageVersion string `json:"package_version,omitempty"`
	Suite          string `json:"suite,omitempty"`
	Component      string `json:"component,omitempty"`
	PackageSHA256  string `json:"package_sha256,omitempty"`
	// Path is inside the package (debian), relative to CUDA_HOME (toolkit),
	// or absolute (file).
	Path string `json:"path"`
}

var (
	versionRE = regexp.MustCompile(`^([0-9]+)\.([0-9]+)$`)
	tagRE     = regexp.MustCompile(`^cuda[0-9]{5}$`)
	shaRE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Load reads and validates a manifest file.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates manifest data; name is used in errors.
func Parse(data []byte, name string) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", name, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", name, err)
	}
	return &m, nil
}

func (m *Manifest) validate() error {
	if len(m.Versions) == 0 {
		return fmt.Errorf("no versions")
	}
	seen := map[string]bool{}
	for _, v := range m.Versions {
		if !versionRE.MatchString(v.Version) {
			return fmt.Errorf("version %q: want MAJOR.MINOR", v.Version)
		}
		if seen[v.Version] {
			return fmt.Errorf("version %s listed twice", v.Version)
		}
		seen[v.Version] = true
		if want := v.WantTag(); v.Tag != want {
			return fmt.Errorf("version %s: tag %q, want %q", v.Version, v.Tag, want)
		}
		if !tagRE.MatchString(v.Tag) {
			return fmt.Errorf("version %s: bad tag %q", v.Version, v.Tag)
		}
		if !shaRE.MatchString(v.SHA256) {
			return fmt.Errorf("version %s: sha256 must be 64 lower-case hex digits", v.Version)
		}
		if err := v.validateExtras(); err != nil {
			return err
		}
		switch v.Source.Kind {
		case SourceDebian:
			s := v.Source
			if s.Package == "" || s.PackageVersion == "" || s.Suite == "" || s.Component == "" || s.Path == "" {
				return fmt.Errorf("version %s: debian source needs package, package_version, suite, component and path", v.Version)
			}
			if !shaRE.MatchString(s.PackageSHA256) {
				return fmt.Errorf("version %s: package_sha256 must be 64 lower-case hex digits", v.Version)
			}
		case SourceToolkit:
			if v.Source.Path == "" {
				return fmt.Errorf("version %s: toolkit source needs path", v.Version)
			}
		case SourceFile:
			// A relative path would depend on where fetch is run.
			if !path.IsAbs(v.Source.Path) {
				return fmt.Errorf("version %s: file source needs an absolute path", v.Version)
			}
		default:
			return fmt.Errorf("version %s: unknown source kind %q (want %q, %q or %q)", v.Version, v.Source.Kind, SourceDebian, SourceToolkit, SourceFile)
		}
	}
	if !seen[m.Default] {
		return fmt.Errorf("default version %q is not in the matrix", m.Default)
	}
	return nil
}

// Number is the version as CUDA_VERSION spells it: 12.4 → 12040.
func (v Version) Number() int {
	p := versionRE.FindStringSubmatch(v.Version)
	if p == nil {
		return 0
	}
	major, _ := strconv.Atoi(p[1])
	minor, _ := strconv.Atoi(p[2])
	return major*1000 + minor*10
}

// WantTag is the build tag the version must have: 12.4 → cuda12040.
func (v Version) WantTag() string { return fmt.Sprintf("cuda%05d", v.Number()) }

// Lookup finds a version by its number ("12.4") or tag ("cuda12040").
func (m *Manifest) Lookup(name string) (Version, error) {
	for _, v := range m.Versions {
		if v.Version == name || v.Tag == name {
			return v, nil
		}
	}
	var known []string
	for _, v := range m.Versions {
		known = append(known, v.Version)
	}
	return Version{}, fmt.Errorf("unknown CUDA version %q (the matrix has %s)", name, strings.Join(known, ", "))
}

// Default returns the version compiled when no build tag is given.
func (m *Manifest) DefaultVersion() Version {
	v, _ := m.Lookup(m.Default)
	return v
}

// CacheDir is the root of the header cache: $GOCUDA_HEADER_CACHE, else
// <user cache dir>/gocuda/headers.
func CacheDir() (string, error) {
	if d := os.Getenv("GOCUDA_HEADER_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("header cache: %w (set GOCUDA_HEADER_CACHE)", err)
	}
	return filepath.Join(d, "gocuda", "headers"), nil
}

// HeaderPath is where the cache keeps this version's cuda.h.
func (v Version) HeaderPath() (string, error) { return v.CachedPath("cuda.h") }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`)

// headerNameRE is a header's name in the cache: a file name, under
// directories where the headers include it so ("crt/host_defines.h"),
// each part a plain name; C (.h) or the C++ half of a C header (.hpp).
var headerNameRE = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.+-]*/)*[A-Za-z0-9_][A-Za-z0-9_.+-]*\.(h|hpp)$`)

// validateExtras checks the library headers and libraries of v: plain file
// names (they are joined to cache paths), pinned checksums, no duplicates.
func (v Version) validateExtras() error {
	seen := map[string]bool{"cuda.h": true, "lib": true}
	for _, h := range v.Headers {
		switch {
		case !headerNameRE.MatchString(h.Name) || strings.Contains(h.Name, "..") || h.Name == "lib" || strings.HasPrefix(h.Name, "lib/"):
			return fmt.Errorf("version %s: header name %q: want a relative path of plain names ending in .h or .hpp, outside lib/", v.Version, h.Name)
		case seen[h.Name]:
			return fmt.Errorf("version %s: header %s listed twice", v.Version, h.Name)
		case h.Path == "":
			return fmt.Errorf("version %s: header %s needs path", v.Version, h.Name)
		case !shaRE.MatchString(h.SHA256):
			return fmt.Errorf("version %s: header %s: sha256 must be 64 lower-case hex digits", v.Version, h.Name)
		case v.Source.Kind == SourceFile && !path.IsAbs(h.Path):
			return fmt.Errorf("version %s: header %s of a file source needs an absolute path", v.Version, h.Name)
		}
		seen[h.Name] = true
	}
	libs := map[string]bool{}
	for _, l := range v.Libraries {
		switch {
		case v.Source.Kind != SourceDebian:
			return fmt.Errorf("version %s: libraries come from Debian packages of the version's suite: its source must be debian", v.Version)
		case !nameRE.MatchString(l.Name):
			return fmt.Errorf("version %s: library name %q: want a plain file name", v.Version, l.Name)
		case libs[l.Name]:
			return fmt.Errorf("version %s: library %s listed twice", v.Version, l.Name)
		case l.Arch == "" || l.Package == "" || l.PackageVersion == "" || l.Path == "":
			return fmt.Errorf("version %s: library %s needs arch, package, package_version and path", v.Version, l.Name)
		case !shaRE.MatchString(l.SHA256) || !shaRE.MatchString(l.PackageSHA256):
			return fmt.Errorf("version %s: library %s: sha256 and package_sha256 must be 64 lower-case hex digits", v.Version, l.Name)
		}
		libs[l.Name] = true
	}
	return nil
}

// Header returns the library header of v named name ("nvrtc.h").
func (v Version) Header(name string) (Header, bool) {
	for _, h := range v.Headers {
		if h.Name == name {
			return h, true
		}
	}
	return Header{}, false
}

// CachedPath is where the cache keeps the file name of this version.
func (v Version) CachedPath(name string) (string, error) {
	d, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, v.Version, name), nil
}

// LibraryDir is the directory where the cache keeps this version's
// libraries, under the names the loaders open: a library that dlopens a
// companion from its own directory (NVRTC its builtins) finds it there.
func (v Version) LibraryDir() (string, error) { return v.CachedPath("lib") }
