package fakecuda

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gocuda/gocuda/internal/cbuild"
)

// procRow is a row of csrc/proc.c's table: an API name, the CUDA version
// that introduced the ABI, and the symbol that implements it.
var procRow = regexp.MustCompile(`\{"(\w+)", (\d+), (?:\(void \(\*\)\(void\)\))?(\w+)\},`)

// BuildForDriver compiles the fake driver as the driver of a CUDA version
// (1000*major + 10*minor: 11070 for 11.7) would be, for its entry points:
// the library exports only those of that version or older, with the
// fakecuda_* controls. FAKECUDA_DRIVER_VERSION alone makes the fake report
// the version and its cuGetProcAddress hand out nothing newer, but package
// cu looks a function up with dlsym when cuGetProcAddress has none, and
// the library Build makes exports every entry point; this one, like the
// real driver of that version, has none newer to find. Run it with
// FAKECUDA_DRIVER_VERSION set to the same version. dir is as for Build.
func BuildForDriver(dir string, version int) (string, error) {
	if version < 1000 {
		return "", fmt.Errorf("fakecuda: BuildForDriver(%d): a CUDA version is 1000*major + 10*minor, such as 11070 for 11.7", version)
	}
	src, err := fs.ReadFile(sources, "csrc/proc.c")
	if err != nil {
		return "", fmt.Errorf("fakecuda: %w", err)
	}
	var syms []string
	for _, m := range procRow.FindAllStringSubmatch(string(src), -1) {
		since, _ := strconv.Atoi(m[2])
		if since <= version && !slices.Contains(syms, m[3]) {
			syms = append(syms, m[3])
		}
	}
	if len(syms) == 0 {
		return "", fmt.Errorf("fakecuda: BuildForDriver(%d): no entry point of csrc/proc.c is that old", version)
	}
	if dir == "" {
		dir = library.DefaultDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("fakecuda: %w", err)
	}
	// The linker's version script keeps these symbols global and makes
	// every other one local. It is named by version and rewritten before
	// every build: the library's hash covers proc.c, whose table it comes
	// from, and the flag that names it.
	script := "{\n  global:\n    fakecuda_*;\n    " + strings.Join(syms, ";\n    ") + ";\n  local: *;\n};\n"
	path := filepath.Join(dir, fmt.Sprintf("fakecuda-cuda%d.map", version))
	tmp, err := os.CreateTemp(dir, "map-")
	if err != nil {
		return "", fmt.Errorf("fakecuda: %w", err)
	}
	_, werr := tmp.WriteString(script)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("fakecuda: %w", werr)
	}
	lib := cbuild.Library{
		Name:    library.Name,
		What:    fmt.Sprintf("the fake driver as of CUDA %d.%d", version/1000, version%1000/10),
		Sources: library.Sources,
		Dir:     library.Dir,
		Flags:   append(slices.Clone(library.Flags), "-Wl,--version-script="+path),
		Libs:    library.Libs,
	}
	return lib.Build(dir)
}
