//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gocuda/gocuda/internal/manifest"
)

// ErrNoToolkitHeaders is matched (errors.Is) by the error of a Compile
// with WithToolkitHeaders when no directory holding the toolkit's headers
// is found; the error names every place looked at.
var ErrNoToolkitHeaders = errors.New("no CUDA toolkit headers found")

// WithIncludeDir adds dir to the directories #include <...> and
// #include "..." search (NVRTC's -I dir), after those of WithOptions.
func WithIncludeDir(dir string) Option {
	return func(c *config) { c.includeDirs = append(c.includeDirs, dir) }
}

// WithToolkitHeaders makes the CUDA toolkit's headers available to the
// source: cuda_fp16.h, cuda_bf16.h, cooperative_groups.h and the others
// NVRTC does not build in. Compile looks, in order, beside the NVRTC
// library it loaded (../include of its directory: a toolkit's lib64),
// in $CUDA_HOME/include, in /usr/local/cuda/include, and in the header
// cache of this module (make headers fills it; $GOCUDA_HEADER_CACHE moves
// it) for the version of the NVRTC loaded, and takes the first directory
// that has cuda_fp16.h, with its cccl subdirectory where there is one
// (CUDA 13 keeps libcu++, which its headers include, there).
// ToolkitIncludeDirs says what it finds. None found is an error matching
// ErrNoToolkitHeaders.
func WithToolkitHeaders() Option { return func(c *config) { c.toolkitHeaders = true } }

// ToolkitIncludeDirs returns the include directories WithToolkitHeaders
// adds, loading NVRTC to learn its version and file: a missing library is
// an error matching ErrNoLibrary.
func ToolkitIncludeDirs() ([]string, error) {
	lib, err := LibraryPath()
	if err != nil {
		return nil, err
	}
	candidates := []string{filepath.Join(filepath.Dir(filepath.Dir(lib)), "include")}
	if h := os.Getenv("CUDA_HOME"); h != "" {
		candidates = append(candidates, filepath.Join(h, "include"))
	}
	candidates = append(candidates, "/usr/local/cuda/include")
	if major, minor, err := Version(); err == nil {
		if d, err := manifest.CacheDir(); err == nil {
			candidates = append(candidates, filepath.Join(d, fmt.Sprintf("%d.%d", major, minor)))
		}
	}
	return toolkitIncludeDirs(candidates)
}

// toolkitIncludeDirs picks the first of candidates that holds cuda_fp16.h,
// with its cccl subdirectory if it has one.
func toolkitIncludeDirs(candidates []string) ([]string, error) {
	for _, dir := range candidates {
		if st, err := os.Stat(filepath.Join(dir, "cuda_fp16.h")); err != nil || !st.Mode().IsRegular() {
			continue
		}
		dirs := []string{dir}
		if st, err := os.Stat(filepath.Join(dir, "cccl")); err == nil && st.IsDir() {
			dirs = append(dirs, filepath.Join(dir, "cccl"))
		}
		return dirs, nil
	}
	return nil, fmt.Errorf("nvrtc: %w: no cuda_fp16.h in %s (install the toolkit's headers, set CUDA_HOME, or name the directory with WithIncludeDir)", ErrNoToolkitHeaders, strings.Join(candidates, ", "))
}

// includeArgs are the -I options of c's include directories, those of
// WithToolkitHeaders (found by toolkit) last.
func (c *config) includeArgs(toolkit func() ([]string, error)) ([]string, error) {
	var args []string
	for _, d := range c.includeDirs {
		if d == "" {
			return nil, fmt.Errorf("nvrtc: Compile: %w: an empty include directory", ErrInvalidArgument)
		}
		args = append(args, "-I"+d)
	}
	if c.toolkitHeaders {
		dirs, err := toolkit()
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			args = append(args, "-I"+d)
		}
	}
	return args, nil
}
