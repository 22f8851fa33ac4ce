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
	return v.WriteHeader(data)
}
