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
	// NCCL are the versions of NCCL's nccl.h that generated/nccl follows.
	// NCCL numbers its releases apart from CUDA (2.22.3) and keeps one ABI
	// (libnccl.so.2) across them, so these are a matrix of their own: tag
	// nccl22203 selects 2.22.3, and no NCCL tag selects the newest. Each
	// entry has the fields of a CUDA version, its sha256 that of nccl.h.
	NCCL []Version `json:"nccl,omitempty"`
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
	// family is "" for a CUDA version and "NCCL" for an entry of
	// Manifest.NCCL: it names the main header and the cache directory.
	family string
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
	versionRE     = regexp.MustCompile(`^([0-9]+)\.([0-9]+)$`)
	ncclVersionRE = regexp.MustCompile(`^([0-9]+)\.([0-9]+)\.([0-9]+)$`)
	tagRE         = regexp.MustCompile(`^cuda[0-9]{5}$`)
	ncclTagRE     = regexp.MustCompile(`^nccl[0-9]{5,}$`)
	shaRE         = regexp.MustCompile(`^[0-9a-f]{64}$`)
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
	for i := range m.NCCL {
		m.NCCL[i].family = FamilyNCCL
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
	return m.validateNCCL()
}

// FamilyNCCL is the family of the entries of Manifest.NCCL.
const FamilyNCCL = "NCCL"

// validateNCCL checks the NCCL entries: MAJOR.MINOR.PATCH, the tag of
// NCCL_VERSION_CODE, nccl.h's SHA-256, a Debian package or a file.
func (m *Manifest) validateNCCL() error {
	seen := map[string]bool{}
	for _, v := range m.NCCL {
		name := v.Name()
		switch {
		case !ncclVersionRE.MatchString(v.Version):
			return fmt.Errorf("NCCL version %q: want MAJOR.MINOR.PATCH", v.Version)
		case seen[v.Version]:
			return fmt.Errorf("%s listed twice", name)
		case v.Tag != v.WantTag() || !ncclTagRE.MatchString(v.Tag):
			return fmt.Errorf("%s: tag %q, want %q", name, v.Tag, v.WantTag())
		case !shaRE.MatchString(v.SHA256):
			return fmt.Errorf("%s: sha256 (of nccl.h) must be 64 lower-case hex digits", name)
		case len(v.Headers) > 0:
			return fmt.Errorf("%s: nccl.h is its only header; it is parsed with the runtime headers of the default CUDA version", name)
		}
		seen[v.Version] = true
		if err := v.validateExtras(); err != nil {
			return err
		}
		s := v.Source
		switch s.Kind {
		case SourceDebian:
			if s.Package == "" || s.PackageVersion == "" || s.Suite == "" || s.Component == "" || s.Path == "" || !shaRE.MatchString(s.PackageSHA256) {
				return fmt.Errorf("%s: debian source needs package, package_version, suite, component, path and package_sha256", name)
			}
		case SourceFile:
			if !path.IsAbs(s.Path) {
				return fmt.Errorf("%s: file source needs an absolute path", name)
			}
		default:
			return fmt.Errorf("%s: source kind %q (want %q or %q)", name, s.Kind, SourceDebian, SourceFile)
		}
	}
	return nil
}

// NCCLMatrix is the NCCL entries as a matrix of their own, for code that
// LookupAny finds a CUDA version, else an NCCL one, by number or tag; the
// error is the CUDA lookup's.
func (m *Manifest) LookupAny(name string) (Version, error) {
	v, err := m.Lookup(name)
	if err == nil || len(m.NCCL) == 0 {
		return v, err
	}
	if nv, nerr := m.NCCLMatrix().Lookup(name); nerr == nil {
		return nv, nil
	}
	return v, err
}

// walks a matrix (the generator, fetch): its default is the newest.
func (m *Manifest) NCCLMatrix() *Manifest {
	n := &Manifest{Versions: m.NCCL}
	for _, v := range m.NCCL {
		if d, err := n.Lookup(n.Default); err != nil || v.Number() > d.Number() {
			n.Default = v.Version
		}
	}
	return n
}

// Name is the version as prose gives it: "CUDA 12.4", "NCCL 2.22.3".
func (v Version) Name() string {
	if v.family == "" {
		return "CUDA " + v.Version
	}
	return v.family + " " + v.Version
}

// Family is "" for a CUDA version and FamilyNCCL for an NCCL one.
func (v Version) Family() string { return v.family }

// MainHeader is the header the version's sha256 pins: cuda.h, or nccl.h
// for an NCCL version.
func (v Version) MainHeader() string {
	if v.family == FamilyNCCL {
		return "nccl.h"
	}
	return "cuda.h"
}

// Number is the version as CUDA_VERSION spells it: 12.4 → 12040; for an
// NCCL version, as NCCL_VERSION_CODE does: 2.22.3 → 22203.
func (v Version) Number() int {
	if p := ncclVersionRE.FindStringSubmatch(v.Version); p != nil && v.family == FamilyNCCL {
		major, _ := strconv.Atoi(p[1])
		minor, _ := strconv.Atoi(p[2])
		patch, _ := strconv.Atoi(p[3])
		return major*10000 + minor*100 + patch
	}
	p := versionRE.FindStringSubmatch(v.Version)
	if p == nil {
		return 0
	}
	major, _ := strconv.Atoi(p[1])
	minor, _ := strconv.Atoi(p[2])
	return major*1000 + minor*10
}

// WantTag is the build tag the version must have: 12.4 → cuda12040.
func (v Version) WantTag() string {
	if v.family == FamilyNCCL {
		return fmt.Sprintf("nccl%05d", v.Number())
	}
	return fmt.Sprintf("cuda%05d", v.Number())
}

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
	what := "CUDA"
	if len(m.Versions) > 0 && m.Versions[0].family != "" {
		what = m.Versions[0].family
	}
	return Version{}, fmt.Errorf("unknown %s version %q (the matrix has %s)", what, name, strings.Join(known, ", "))
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

// HeaderPath is where the cache keeps this version's main header (cuda.h).
func (v Version) HeaderPath() (string, error) { return v.CachedPath(v.MainHeader()) }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`)

// headerNameRE is a header's name in the cache: a file name, under
// directories where the headers include it so ("crt/host_defines.h"),
// each part a plain name; C (.h) or the C++ half of a C header (.hpp).
var headerNameRE = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.+-]*/)*[A-Za-z0-9_][A-Za-z0-9_.+-]*\.(h|hpp)$`)

// validateExtras checks the library headers and libraries of v: plain file
// names (they are joined to cache paths), pinned checksums, no duplicates.
func (v Version) validateExtras() error {
	seen := map[string]bool{v.MainHeader(): true, "lib": true}
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
	dir := v.Version
	if v.family != "" {
		// Apart from CUDA's: NCCL's numbers could one day meet them.
		dir = strings.ToLower(v.family) + "-" + v.Version
	}
	return filepath.Join(d, dir, name), nil
}

// LibraryDir is the directory where the cache keeps this version's
// libraries, under the names the loaders open: a library that dlopens a
// companion from its own directory (NVRTC its builtins) finds it there.
func (v Version) LibraryDir() (string, error) { return v.CachedPath("lib") }
