//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NVRTC (12.4, say) has no option that reports the files a compile read
// (it refuses -M, -MD and --generate-dependencies), so the cache finds
// them itself, erring on the side of too many: every #include,
// #include_next and __has_include name in the source, the in-memory
// headers and, transitively, in every file found, whatever #if surrounds
// it, resolved against every place NVRTC could take it from. Each such
// place enters the key, with the file's content where one exists and its
// absence where none does, so that a file created earlier on the search
// path misses too. A name given through a macro cannot be followed
// without preprocessing; such a compile is not cached (errUncacheable).

// errUncacheable is the reason a compile goes uncached.
var errUncacheable = errors.New("uncacheable")

// maxScannedFiles bounds the include graph the cache follows: beyond it
// (a header including itself through ever longer "../" paths, say) the
// compile goes uncached.
const maxScannedFiles = 20000

// inclusion is a file name an #include or __has_include names.
type inclusion struct {
	name   string
	quoted bool // "name", searched beside the including file first
}

// directives returns the inclusions text names; computed reports one
// whose name comes from a macro.
func directives(text []byte) (incs []inclusion, computed bool) {
	if bytes.Contains(text, []byte("\\\n")) {
		text = bytes.ReplaceAll(text, []byte("\\\n"), nil)
	}
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		t := bytes.TrimLeft(line, " \t\r\f\v")
		if len(t) > 0 && t[0] == '#' {
			t = bytes.TrimLeft(t[1:], " \t")
			for _, kw := range []string{"include_next", "include", "import"} {
				if rest, ok := bytes.CutPrefix(t, []byte(kw)); ok {
					if len(rest) > 0 && isIdent(rest[0]) {
						continue
					}
					inc, ok := literal(bytes.TrimLeft(rest, " \t"))
					if !ok {
						computed = true
					} else {
						incs = append(incs, inc)
					}
					break
				}
			}
		}
		for rest := line; ; {
			i := bytes.Index(rest, []byte("__has_include"))
			if i < 0 {
				break
			}
			rest = rest[i+len("__has_include"):]
			rest, _ = bytes.CutPrefix(rest, []byte("_next"))
			arg := bytes.TrimLeft(rest, " \t")
			if len(arg) == 0 || arg[0] != '(' {
				computed = true // named without its argument: a macro's body
				continue
			}
			inc, ok := literal(bytes.TrimLeft(arg[1:], " \t"))
			if !ok {
				computed = true
				continue
			}
			incs = append(incs, inc)
		}
	}
	return incs, computed
}

func isIdent(b byte) bool {
	return b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// literal parses "name" or <name> at the start of t.
func literal(t []byte) (inclusion, bool) {
	if len(t) < 2 {
		return inclusion{}, false
	}
	end := byte('>')
	if t[0] == '"' {
		end = '"'
	} else if t[0] != '<' {
		return inclusion{}, false
	}
	j := bytes.IndexByte(t[1:], end)
	if j <= 0 {
		return inclusion{}, false
	}
	return inclusion{name: string(t[1 : 1+j]), quoted: end == '"'}, true
}

// fileSig identifies a version of a file without reading it. The change
// time, which no one can set, catches a rewrite that kept the size and
// put the modification time back.
type fileSig struct {
	dev, ino, size   uint64
	mtimeNs, ctimeNs int64
	mode             uint32
}

func sigOf(st *syscall.Stat_t) fileSig {
	return fileSig{
		dev: uint64(st.Dev), ino: st.Ino, size: uint64(st.Size), mode: st.Mode,
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano(),
	}
}

// scanned is what the cache knows of one version of a file.
type scanned struct {
	sig      fileSig
	sum      [32]byte
	incs     []inclusion
	computed bool
}

// fileMemo keeps, for each path, the digest and inclusions of the version
// last read, so that a hit only stats the files it depends on.
var fileMemo sync.Map // string → *scanned

// racyWindow: a file modified this recently may change again within the
// resolution of its timestamps, unseen by its signature; it is not
// remembered.
const racyWindow = 2 * time.Second

// scanFile returns what path holds, nil where no regular file is.
func scanFile(path string) (*scanned, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		// NVRTC cannot include a directory; anything else it might
		// open (a FIFO, a device) has no content to key on.
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			return nil, nil
		}
		return nil, &fs.PathError{Op: "include", Path: path, Err: errUncacheable}
	}
	sig := sigOf(&st)
	if m, ok := fileMemo.Load(path); ok && m.(*scanned).sig == sig {
		return m.(*scanned), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Read, then check that the file did not change meanwhile.
	var after syscall.Stat_t
	if err := syscall.Stat(path, &after); err != nil || sigOf(&after) != sig {
		return nil, &fs.PathError{Op: "include", Path: path, Err: errors.New("changed while read")}
	}
	s := &scanned{sig: sig, sum: sha256.Sum256(b)}
	s.incs, s.computed = directives(b)
	if time.Since(time.Unix(0, sig.mtimeNs)) > racyWindow && time.Since(time.Unix(0, sig.ctimeNs)) > racyWindow {
		fileMemo.Store(path, s)
	}
	return s, nil
}

// dependency is one place the compile could have read a file from.
type dependency struct {
	path  string
	found bool
	sum   [32]byte
}

// searchPath is where NVRTC looks for the files a compile includes: the
// in-memory headers, the directory of the program's name (relative to the
// working directory) for quoted names, and the -I directories.
type searchPath struct {
	headers    map[string][]string // in-memory headers' contents by name
	programDir string
	dirs       []string
}

// includeDirsOf returns the -I directories args name, in order. It
// reports false for an argument that makes NVRTC read or write a file the
// cache cannot account for.
func includeDirsOf(args []string) (dirs, preIncludes []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "-I" || a == "--include-path" || a == "-isystem" || a == "--system-include":
			dirs = append(dirs, next())
		case strings.HasPrefix(a, "--include-path="), strings.HasPrefix(a, "--system-include="):
			dirs = append(dirs, a[strings.IndexByte(a, '=')+1:])
		case strings.HasPrefix(a, "-isystem"):
			dirs = append(dirs, strings.TrimPrefix(strings.TrimPrefix(a, "-isystem"), "="))
		case strings.HasPrefix(a, "-I"):
			dirs = append(dirs, strings.TrimPrefix(a[2:], "="))
		case a == "-include" || a == "--pre-include":
			preIncludes = append(preIncludes, next())
		case strings.HasPrefix(a, "--pre-include="), strings.HasPrefix(a, "-include="):
			preIncludes = append(preIncludes, a[strings.IndexByte(a, '=')+1:])
		case readsOrWritesFiles(a):
			return nil, nil, false
		}
	}
	return dirs, preIncludes, true
}

// readsOrWritesFiles reports an option by which NVRTC reads a file other
// than a header (a precompiled header) or writes one (a dependency list,
// a time trace): a hit would skip the write, and the read is not keyed.
func readsOrWritesFiles(opt string) bool {
	opt = strings.TrimLeft(opt, "-")
	for _, p := range []string{"pch", "create-pch", "use-pch", "time", "fdevice-time-trace", "M", "dependency-output", "generate-dependencies", "generate-nonsystem-dependencies"} {
		if opt == p || strings.HasPrefix(opt, p+"=") || strings.HasPrefix(opt, p+"-") {
			return true
		}
	}
	// -MD, -MMD, -MF and the like.
	return len(opt) > 1 && opt[0] == 'M' && opt[1] >= 'A' && opt[1] <= 'Z'
}

// dependencies returns every place the compile of src could take a file
// from, sorted, or an error wrapping errUncacheable where it cannot tell.
func dependencies(src string, sp *searchPath, preIncludes []string) ([]dependency, error) {
	deps := map[string]dependency{}
	type pending struct {
		inc inclusion
		// dirs are those of the including file and of the files that
		// included it, up to the program: a quoted name is looked for
		// beside the first, and, by some compilers, beside the others.
		dirs []string
	}
	var queue []pending
	add := func(text []byte, dirs []string) error {
		incs, computed := directives(text)
		if computed {
			return errUncacheable
		}
		for _, inc := range incs {
			queue = append(queue, pending{inc, dirs})
		}
		return nil
	}
	top := []string{sp.programDir}
	if err := add([]byte(src), top); err != nil {
		return nil, err
	}
	for _, p := range preIncludes {
		queue = append(queue, pending{inclusion{name: p, quoted: true}, top})
	}
	seenHeaders := map[string]bool{}
	for len(queue) > 0 {
		p := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		name := p.inc.name
		if hs, ok := sp.headers[name]; ok && !seenHeaders[name] {
			// Its content is in the key already; its own inclusions
			// resolve beside the program, or beside its name's directory.
			seenHeaders[name] = true
			dirs := withDir(p.dirs, filepath.Join(sp.programDir, filepath.Dir(name)))
			for _, h := range hs {
				if err := add([]byte(h), dirs); err != nil {
					return nil, err
				}
			}
		}
		var candidates []string
		if filepath.IsAbs(name) {
			candidates = []string{filepath.Clean(name)}
		} else {
			if p.inc.quoted {
				for _, d := range p.dirs {
					candidates = append(candidates, filepath.Join(d, name))
				}
			}
			for _, d := range sp.dirs {
				candidates = append(candidates, filepath.Join(d, name))
			}
		}
		for _, c := range candidates {
			if _, done := deps[c]; done {
				continue
			}
			if len(deps) >= maxScannedFiles {
				return nil, errUncacheable
			}
			s, err := scanFile(c)
			if err != nil {
				return nil, err
			}
			if s == nil {
				deps[c] = dependency{path: c}
				continue
			}
			deps[c] = dependency{path: c, found: true, sum: s.sum}
			if s.computed {
				return nil, &fs.PathError{Op: "include", Path: c, Err: errUncacheable}
			}
			dirs := withDir(p.dirs, filepath.Dir(c))
			for _, inc := range s.incs {
				queue = append(queue, pending{inc, dirs})
			}
		}
	}
	out := make([]dependency, 0, len(deps))
	for _, d := range deps {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b dependency) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

// withDir returns dirs with dir first, once.
func withDir(dirs []string, dir string) []string {
	out := make([]string, 0, len(dirs)+1)
	out = append(out, dir)
	for _, d := range dirs {
		if d != dir {
			out = append(out, d)
		}
	}
	return out
}
