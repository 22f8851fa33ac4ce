// Package cbuild compiles a shared library from C sources embedded in a Go
// package, with the machine's C compiler (the one cgo uses), at test time:
// the fakes of internal/fakecuda and internal/fakenccl are built this way,
// so the repository carries no binary.
package cbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Library describes a library to build.
type Library struct {
	// Name names the file, lib<Name>-<hash>.so, its default directory,
	// gocuda-<Name>-<uid> under os.TempDir(), and prefixes errors.
	Name string
	// What says what the library is, in errors: "the fake driver".
	What string
	// Sources holds the sources, under Dir: every file there is written
	// out by its base name, and the .c files are compiled.
	Sources fs.FS
	Dir     string
	// Shared are sources of other packages built into the library too
	// (internal/fakelib's, which several fakes use); a base name may
	// appear only once in all.
	Shared []Sources
	// Flags are the compiler flags, before the sources.
	Flags []string
	// Libs are the linker flags after the sources (-ldl).
	Libs []string
}

// Sources are C sources under Dir of FS.
type Sources struct {
	FS  fs.FS
	Dir string
}

// DefaultDir is where Build puts the library when given no directory: one
// of the user's under os.TempDir().
func (l *Library) DefaultDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("gocuda-%s-%d", l.Name, os.Getuid()))
}

// Build compiles the library into dir and returns its path. An empty dir
// means a directory of the user's under os.TempDir(). The file name
// carries a hash of the sources, compiler and flags, so a build is reused
// by every later call and process until the sources change; concurrent
// builds (the test binaries of several packages at once) each write a
// temporary file and rename it into place. The compiler is $CC, default
// gcc.
func (l *Library) Build(dir string) (string, error) {
	if dir == "" {
		dir = l.DefaultDir()
	}
	cc := strings.Fields(os.Getenv("CC"))
	if len(cc) == 0 {
		cc = []string{"gcc"}
	}
	files, sum, err := l.readSources(cc)
	if err != nil {
		return "", err
	}
	lib := filepath.Join(dir, "lib"+l.Name+"-"+sum[:16]+".so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", l.Name, err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", l.Name, err)
	}
	defer os.RemoveAll(tmp)
	var cfiles []string
	for name, data := range files {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return "", fmt.Errorf("%s: %w", l.Name, err)
		}
		if strings.HasSuffix(name, ".c") {
			cfiles = append(cfiles, p)
		}
	}
	out := filepath.Join(tmp, "lib.so")
	args := append(append(append([]string{}, cc[1:]...), l.Flags...), "-o", out)
	args = append(append(args, cfiles...), l.Libs...)
	cmd := exec.Command(cc[0], args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: building %s with %s: %v\n%s", l.Name, l.What, cc[0], err, msg)
	}
	if err := os.Rename(out, lib); err != nil {
		return "", fmt.Errorf("%s: %w", l.Name, err)
	}
	return lib, nil
}

// readSources returns the C sources by base name and a hash of them with
// the compiler and flags.
func (l *Library) readSources(cc []string) (map[string][]byte, string, error) {
	files := map[string][]byte{}
	h := sha256.New()
	fmt.Fprintf(h, "%q %q\n", cc, l.Flags)
	if len(l.Libs) > 0 {
		fmt.Fprintf(h, "libs %q\n", l.Libs)
	}
	var err error
	for _, src := range append([]Sources{{l.Sources, l.Dir}}, l.Shared...) {
		// fs.WalkDir walks in lexical order, so the hash is stable.
		err = fs.WalkDir(src.FS, src.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(src.FS, p)
			if err != nil {
				return err
			}
			if _, dup := files[path.Base(p)]; dup {
				return fmt.Errorf("two sources named %s", path.Base(p))
			}
			fmt.Fprintf(h, "%s %d\n", p, len(data))
			h.Write(data)
			files[path.Base(p)] = data
			return nil
		})
		if err != nil {
			break
		}
	}
	if err == nil && len(files) == 0 {
		err = errors.New("no sources embedded")
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", l.Name, err)
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}
