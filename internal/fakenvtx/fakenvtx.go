//go:build linux && (amd64 || arm64)

// Package fakenvtx builds a fake NVTX tool: a shared library that
// attaches to a program's NVTX the way Nsight Systems' injection library
// does, for the tests of package cuda/nvtx, which need no GPU and no
// NVIDIA file.
//
// The library is C (csrc/), written from NVTX v3's documented ABI and
// compiled at test time with the machine's C compiler, like the fake
// driver. Its InitializeInjectionNvtx2 asks the application's export
// table for the callbacks table (id 1) and the version table (id 3),
// tells the version back, asks for the function table of every module
// (CORE, CUDA, OpenCL, CUDART, CORE2, SYNC) and of two that do not exist,
// and fills the slots of the CORE module (MarkEx, RangeStartEx,
// RangeEnd, RangePushEx, RangePop, NameCategoryA) and of the CORE2 module
// (the Domain* versions of those, DomainRegisterStringA,
// DomainCreateA). Every call it gets is one line in the file named by
// LogEnv (see Lines), with the event's attributes spelt out: version and
// size of the struct, message (a registered string as reg(domain)"text"),
// category, color, payload. Range ids count from 1, process-wide; push
// depths are per thread and domain.
//
// Two variables change it: ModulesEnv ("core", "core2" or both, the
// default, comma-separated) chooses which modules it fills, and
// InitResultEnv=0 makes its entry point fill the slots and then return 0,
// refusing to attach. BuildWithoutEntry builds the same library with its
// entry point hidden: a library that is no NVTX tool.
package fakenvtx

import (
	"embed"
	"os"
	"strings"

	"github.com/gocuda/gocuda/internal/cbuild"
)

// The variables the fake reads in its entry point.
const (
	LogEnv        = "FAKENVTX_LOG"
	ModulesEnv    = "FAKENVTX_MODULES"
	InitResultEnv = "FAKENVTX_INIT_RESULT"
)

//go:embed csrc/*.c
var sources embed.FS

var flags = []string{"-shared", "-fPIC", "-O2", "-pthread", "-fvisibility=hidden", "-std=gnu11"}

var tool = cbuild.Library{
	Name:    "fakenvtx",
	What:    "the fake NVTX tool",
	Sources: sources,
	Dir:     "csrc",
	Flags:   flags,
	Libs:    []string{"-lpthread"},
}

var notool = cbuild.Library{
	Name:    "fakenvtx-noentry",
	What:    "the fake NVTX tool without its entry point",
	Sources: sources,
	Dir:     "csrc",
	Flags:   append(append([]string{}, flags...), "-DFAKENVTX_NO_ENTRY"),
	Libs:    []string{"-lpthread"},
}

// Build compiles the fake tool into dir (empty: a directory of the
// user's under os.TempDir()) and returns its path; a build is reused
// until the sources, compiler or flags change.
func Build(dir string) (string, error) {
	return tool.Build(dir)
}

// BuildWithoutEntry compiles the fake with InitializeInjectionNvtx2
// hidden and returns its path.
func BuildWithoutEntry(dir string) (string, error) {
	return notool.Build(dir)
}

// Lines returns the lines the fake wrote to the log at path, in order.
func Lines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}
