package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gocuda/gocuda/internal/manifest"
)

// errNoFile reports that a file version's header is not on this machine,
// which for a version nobody asked for by name is not a failure: such a
// header is on one machine only (a Python package's copy, say).
var errNoFile = errors.New("no header")

// fileEnv names the variable that overrides the path of a file version's
// header: GOCUDA_HEADER_CUDA12080 for tag cuda12080.
func fileEnv(v manifest.Version) string { return "GOCUDA_HEADER_" + strings.ToUpper(v.Tag) }

// filePath is where to read a file version's header: the -file flag's path
// for it, else its variable's, else the manifest's.
func filePath(v manifest.Version, flags map[string]string) string {
	if p := flags[v.Version]; p != "" {
		return p
	}
	if p := os.Getenv(fileEnv(v)); p != "" {
		return p
	}
	return filepath.FromSlash(v.Source.Path)
}

// importFile copies v's header from src into the cache.
func importFile(v manifest.Version, src string) (string, error) {
	data, err := readBounded(src)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w at %s (set -file %s=PATH or $%s)", errNoFile, src, v.Version, fileEnv(v))
	}
	if err != nil {
		return "", err
	}
	if err := manifest.Verify(src, data, v.SHA256); err != nil {
		return "", fmt.Errorf("%w (is %s the %s of %s?)", err, src, v.MainHeader(), v.Name())
	}
	path, err := v.WriteHeader(data)
	if err != nil {
		return "", err
	}
	// A file version's other headers are read beside its main one, where
	// the flag or variable put it or where the manifest says.
	dir := filepath.Dir(src)
	return path, importHeaders(v, func(p string) string { return filepath.Join(dir, filepath.Base(filepath.FromSlash(p))) })
}

// readBounded reads a header of at most maxHeader bytes: a path given by
// hand may name anything, a device or a huge file included.
func readBounded(path string) ([]byte, error) {
	// Checked before opening: opening a FIFO blocks.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxHeader+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > maxHeader {
		return nil, fmt.Errorf("%s is larger than %d MB", path, maxHeader>>20)
	}
	return data, nil
}
