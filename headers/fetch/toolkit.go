package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gocuda/gocuda/internal/manifest"
)

// errNoToolkit reports that the installed toolkit does not have the header,
// which for a version nobody asked for by name is not a failure: most machines
// have at most one toolkit.
var errNoToolkit = errors.New("no toolkit")

// importToolkit copies v's header from an installed toolkit into the cache.
func importToolkit(v manifest.Version, cudaHome string) (string, error) {
	src := filepath.Join(cudaHome, filepath.FromSlash(v.Source.Path))
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w at %s (set -cuda-home or $CUDA_HOME)", errNoToolkit, src)
	}
	if err != nil {
		return "", err
	}
	if err := manifest.Verify(src, data, v.SHA256); err != nil {
		return "", fmt.Errorf("%w (is the toolkit at %s CUDA %s?)", err, cudaHome, v.Version)
	}
	path, err := v.WriteHeader(data)
	if err != nil {
		return "", err
	}
	return path, importHeaders(v, func(p string) string { return filepath.Join(cudaHome, filepath.FromSlash(p)) })
}

// importHeaders copies the library headers of v into the cache, each
// checked against its pinned SHA-256; where reads a header's manifest path
// as a path on this machine.
func importHeaders(v manifest.Version, where func(string) string) error {
	for _, h := range v.Headers {
		src := where(h.Path)
		data, err := readBounded(src)
		if err != nil {
			return fmt.Errorf("%s of %s: %w", h.Name, v.Name(), err)
		}
		if err := manifest.Verify(src, data, h.SHA256); err != nil {
			return err
		}
		if _, err := v.WriteCached(h.Name, data, h.SHA256); err != nil {
			return err
		}
	}
	return nil
}
