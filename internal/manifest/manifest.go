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
func (v Version) HeaderPath() (string, error) {
	d, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, v.Version, "cuda.h"), nil
}
