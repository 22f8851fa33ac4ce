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
	"slices"
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
	// CuDNN are the versions of cuDNN's headers that generated/cudnn
	// follows, a matrix of their own as NCCL's: tag cudnn91400 selects
	// 9.14.0. Each entry pins cudnn.h and lists the headers it includes.
	CuDNN []Version `json:"cudnn,omitempty"`
	// family is that of Versions: nil for CUDA's, another in a matrix
	// that Matrix made.
	family *Family
}

// Family is a set of versions numbered together, each pinning one main
// header. What differs between the families is here, as data.
type Family struct {
	Name   string // in prose: "CUDA", "NCCL"
	Header string // the main header, the one a version's sha256 pins
	Macro  string // the header's macro that spells the version as Number does
	// Numbering says how Number spells a version, as the generated doc
	// comments put it.
	Numbering string
	tag       string // prefix of the build tags
	form      string // the version's form, for errors: "MAJOR.MINOR"
	version   *regexp.Regexp
	// place weighs each part of the version in Number.
	place []int
	// cacheDir prefixes the version in the name of its cache directory.
	cacheDir string
	// ownHeaders says whether a version lists headers besides its main
	// one; when not, the main header is parsed with those of the default
	// CUDA version (see ParsedWith).
	ownHeaders bool
	// withCUDA says that a version's own headers need the runtime headers
	// of the default CUDA version too (cuDNN's include cuda_runtime_api.h).
	withCUDA bool
	sources  []string
}

var (
	// CUDA is the family of cuda.h and the CUDA libraries.
	CUDA = &Family{
		Name: "CUDA", Header: "cuda.h", Macro: "CUDA_VERSION", Numbering: "e.g. 12040",
		tag: "cuda", form: "MAJOR.MINOR", version: regexp.MustCompile(`^([0-9]+)\.([0-9]+)$`), place: []int{1000, 10},
		ownHeaders: true, sources: []string{SourceDebian, SourceToolkit, SourceFile},
	}
	// NCCL is the family of nccl.h, the versions of Manifest.NCCL.
	NCCL = &Family{
		Name: "NCCL", Header: "nccl.h", Macro: "NCCL_VERSION_CODE", Numbering: "as NCCL_VERSION_CODE spells it: 22203 for 2.22.3",
		tag: "nccl", form: "MAJOR.MINOR.PATCH", version: regexp.MustCompile(`^([0-9]+)\.([0-9]+)\.([0-9]+)$`), place: []int{10000, 100, 1},
		// NCCL's numbers could one day meet CUDA's.
		cacheDir: "nccl-",
		sources:  []string{SourceDebian, SourceFile},
	}
	// CuDNN is the family of cudnn.h and the headers it includes, the
	// versions of Manifest.CuDNN.
	CuDNN = &Family{
		Name: "cuDNN", Header: "cudnn.h", Macro: "CUDNN_VERSION", Numbering: "as CUDNN_VERSION spells it: 91400 for 9.14.0",
		tag: "cudnn", form: "MAJOR.MINOR.PATCH", version: regexp.MustCompile(`^([0-9]+)\.([0-9]+)\.([0-9]+)$`), place: []int{10000, 100, 1},
		cacheDir:   "cudnn-",
		ownHeaders: true, withCUDA: true,
		sources: []string{SourceDebian, SourceFile},
	}
	// Families are every family, CUDA's first.
	Families = []*Family{CUDA, NCCL, CuDNN}
)

// entries are the versions of family f that m lists.
func (m *Manifest) entries(f *Family) []Version {
	switch f {
	case m.Family():
		return m.Versions
	case NCCL:
		return m.NCCL
	case CuDNN:
		return m.CuDNN
	}
	return nil
}

// Family is the family of m's Versions.
func (m *Manifest) Family() *Family {
	if m.family == nil {
		return CUDA
	}
	return m.family
}

// All is every version of m, CUDA's first.
func (m *Manifest) All() []Version {
	var all []Version
	for _, f := range Families {
		all = append(all, m.entries(f)...)
	}
	return all
}

// Version is one version of a family's matrix.
type Version struct {
	Version string `json:"version"` // "12.4"
	Tag     string `json:"tag"`     // build tag, "cuda12040"
	Source  Source `json:"source"`
	SHA256  string `json:"sha256"` // of the main header (cuda.h)
	// Headers are the library headers the version provides besides its main header,
	// from the same source (one package, one toolkit).
	Headers []Header `json:"headers,omitempty"`
	family  *Family  // nil for CUDA's
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
	// Package, for a Debian source, names the package of the version's
	// suite and component that has the header when the source's package
	// does not (cufile.h is libcufile-dev's); empty for the source's own.
	Package        string `json:"package,omitempty"`
	PackageVersion string `json:"package_version,omitempty"`
	PackageSHA256  string `json:"package_sha256,omitempty"`
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

var shaRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

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
	for _, f := range Families {
		vs := m.entries(f)
		for i := range vs {
			vs[i].family = f
		}
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
	for _, f := range Families {
		if err := f.validate(m.entries(f)); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(m.Versions, func(v Version) bool { return v.Version == m.Default }) {
		return fmt.Errorf("default version %q is not in the matrix", m.Default)
	}
	return nil
}

// validate checks versions vs of f.
func (f *Family) validate(vs []Version) error {
	seen := map[string]bool{}
	for _, v := range vs {
		name := v.Name()
		switch {
		case !f.version.MatchString(v.Version):
			return fmt.Errorf("%s version %q: want %s", f.Name, v.Version, f.form)
		case seen[v.Version]:
			return fmt.Errorf("%s listed twice", name)
		case v.Tag != v.WantTag():
			return fmt.Errorf("%s: tag %q, want %q", name, v.Tag, v.WantTag())
		case !shaRE.MatchString(v.SHA256):
			return fmt.Errorf("%s: sha256 (of %s) must be 64 lower-case hex digits", name, f.Header)
		case len(v.Headers) > 0 && !f.ownHeaders:
			return fmt.Errorf("%s: %s is its only header; it is parsed with the runtime headers of the default CUDA version", name, f.Header)
		case !slices.Contains(f.sources, v.Source.Kind):
			return fmt.Errorf("%s: source kind %q (want one of %s)", name, v.Source.Kind, strings.Join(f.sources, ", "))
		}
		seen[v.Version] = true
		if err := v.validateExtras(); err != nil {
			return err
		}
		if err := v.Source.validate(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (s Source) validate() error {
	switch s.Kind {
	case SourceDebian:
		if s.Package == "" || s.PackageVersion == "" || s.Suite == "" || s.Component == "" || s.Path == "" {
			return fmt.Errorf("debian source needs package, package_version, suite, component and path")
		}
		if !shaRE.MatchString(s.PackageSHA256) {
			return fmt.Errorf("package_sha256 must be 64 lower-case hex digits")
		}
	case SourceToolkit:
		if s.Path == "" {
			return fmt.Errorf("toolkit source needs path")
		}
	case SourceFile:
		// A relative path would depend on where fetch is run.
		if !path.IsAbs(s.Path) {
			return fmt.Errorf("file source needs an absolute path")
		}
	}
	return nil
}

// LookupAny finds a version of any family by number or tag, CUDA's first;
// the error is the CUDA lookup's.
func (m *Manifest) LookupAny(name string) (Version, error) {
	v, err := m.Lookup(name)
	if err != nil {
		for _, f := range Families[1:] {
			if fv, ferr := m.Matrix(f).Lookup(name); ferr == nil {
				return fv, nil
			}
		}
	}
	return v, err
}

// Matrix is the versions of family f as a matrix of their own, for code
// that walks one (the generator, fetch): m itself for its own family; for
// another, whose default m does not name, the newest is the default.
func (m *Manifest) Matrix(f *Family) *Manifest {
	if f == m.Family() {
		return m
	}
	n := &Manifest{Versions: m.entries(f), family: f}
	for _, v := range n.Versions {
		if d, err := n.Lookup(n.Default); err != nil || v.Number() > d.Number() {
			n.Default = v.Version
		}
	}
	return n
}

// ParsedWith is the version whose headers the main header of v is parsed
// with: v itself, or the default CUDA version for a family whose versions
// have no headers of their own or need CUDA's besides theirs. m is the
// whole manifest.
func (m *Manifest) ParsedWith(v Version) Version {
	if f := v.Family(); f.ownHeaders && !f.withCUDA {
		return v
	}
	return m.Matrix(CUDA).DefaultVersion()
}

// Name is the version as prose gives it: "CUDA 12.4", "NCCL 2.22.3".
func (v Version) Name() string { return v.Family().Name + " " + v.Version }

// Family is the family of v.
func (v Version) Family() *Family {
	if v.family == nil {
		return CUDA
	}
	return v.family
}

// MainHeader is the header the version's sha256 pins: cuda.h, nccl.h.
func (v Version) MainHeader() string { return v.Family().Header }

// Number is the version as its family's macro spells it: 12.4 → 12040
// (CUDA_VERSION), 2.22.3 → 22203 (NCCL_VERSION_CODE); 0 for a version not
// of the family's form.
func (v Version) Number() int {
	f := v.Family()
	p := f.version.FindStringSubmatch(v.Version)
	if p == nil {
		return 0
	}
	n := 0
	for i, w := range f.place {
		d, _ := strconv.Atoi(p[i+1])
		n += d * w
	}
	return n
}

// Major is the version's first number: 12 for 12.4, 2 for 2.22.3.
func (v Version) Major() int { return v.Number() / v.Family().place[0] }

// WantTag is the build tag the version must have: 12.4 → cuda12040.
func (v Version) WantTag() string { return fmt.Sprintf("%s%05d", v.Family().tag, v.Number()) }

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
	return Version{}, fmt.Errorf("unknown %s version %q (the matrix has %s)", m.Family().Name, name, strings.Join(known, ", "))
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
		case (h.Package != "" || h.PackageVersion != "" || h.PackageSHA256 != "") && v.Source.Kind != SourceDebian:
			return fmt.Errorf("version %s: header %s names a package, but the version's source is not debian", v.Version, h.Name)
		case h.Package != "" && (h.PackageVersion == "" || !shaRE.MatchString(h.PackageSHA256)),
			h.Package == "" && (h.PackageVersion != "" || h.PackageSHA256 != ""):
			return fmt.Errorf("version %s: header %s: a package of its own needs package, package_version and a package_sha256 of 64 lower-case hex digits", v.Version, h.Name)
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
	return filepath.Join(d, v.Family().cacheDir+v.Version, name), nil
}

// LibraryDir is the directory where the cache keeps this version's
// libraries, under the names the loaders open: a library that dlopens a
// companion from its own directory (NVRTC its builtins) finds it there.
func (v Version) LibraryDir() (string, error) { return v.CachedPath("lib") }
