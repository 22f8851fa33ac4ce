//go:build linux && (amd64 || arm64)

package nvrtc

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	raw "github.com/gocuda/gocuda/generated/nvrtc"
)

// CacheEnv names the environment variable that moves the compile cache
// to the directory it holds, or turns it off with "off".
const CacheEnv = "GOCUDA_NVRTC_CACHE"

// CacheLimitEnv names the environment variable that bounds the cache's
// size: bytes, or a number with a KiB, MiB or GiB suffix.
const CacheLimitEnv = "GOCUDA_NVRTC_CACHE_LIMIT"

// DefaultCacheLimit is the size the cache is kept under unless
// WithCacheLimit or CacheLimitEnv says otherwise.
const DefaultCacheLimit = 256 << 20

// WithoutCache compiles without the cache: nothing is looked up or stored.
func WithoutCache() Option { return func(c *config) { c.noCache = true } }

// WithCacheDir keeps the cache in dir instead of the default directory
// (or the one CacheEnv names). CacheEnv=off still turns it off.
func WithCacheDir(dir string) Option { return func(c *config) { c.cacheDir = dir } }

// WithCacheLimit bounds the cache's directory to n bytes: storing an
// entry evicts the least recently used ones beyond it. It overrides
// CacheLimitEnv.
func WithCacheLimit(n int64) Option {
	return func(c *config) { c.cacheMax = max(n, 0) }
}

// CacheStats counts what the compile cache did in this process.
type CacheStats struct {
	Hits   uint64 // compiles answered from the cache
	Misses uint64 // compiles looked up and not found (Corrupt included)
	Stores uint64 // entries written
	// Corrupt counts entries that failed verification (a wrong header,
	// length or checksum): they were compiled again and replaced.
	Corrupt   uint64
	Evictions uint64 // entries removed to keep the size bound
	// Uncached counts compiles the cache could not key: a file
	// included through a macro, or an option by which NVRTC reads or
	// writes other files (precompiled headers, a time trace).
	Uncached uint64
	// Errors counts failures of the cache itself (an unwritable
	// directory, say), which never fail a compile; LastError is the
	// latest.
	Errors    uint64
	LastError error
}

var stats struct {
	hits, misses, stores, corrupt, evictions, uncached, errors atomic.Uint64

	mu      sync.Mutex
	lastErr error
}

// Stats returns what the compile cache has done since the process
// started.
func Stats() CacheStats {
	stats.mu.Lock()
	last := stats.lastErr
	stats.mu.Unlock()
	return CacheStats{
		Hits: stats.hits.Load(), Misses: stats.misses.Load(), Stores: stats.stores.Load(),
		Corrupt: stats.corrupt.Load(), Evictions: stats.evictions.Load(),
		Uncached: stats.uncached.Load(), Errors: stats.errors.Load(), LastError: last,
	}
}

func cacheError(err error) {
	stats.errors.Add(1)
	stats.mu.Lock()
	stats.lastErr = fmt.Errorf("nvrtc: cache: %w", err)
	stats.mu.Unlock()
}

// cacheSettings returns the cache's directory, "" when it is off, and its
// size bound.
func (c *config) cacheSettings() (dir string, limit int64, err error) {
	env := os.Getenv(CacheEnv)
	if c.noCache || strings.EqualFold(env, "off") {
		return "", 0, nil
	}
	switch {
	case c.cacheDir != "":
		dir = c.cacheDir
	case env != "":
		dir = env
	default:
		d, err := os.UserCacheDir()
		if err != nil {
			return "", 0, fmt.Errorf("no directory for the cache (set %s): %w", CacheEnv, err)
		}
		dir = filepath.Join(d, "gocuda", "nvrtc")
	}
	limit = c.cacheMax
	if limit < 0 {
		limit = DefaultCacheLimit
		if s := os.Getenv(CacheLimitEnv); s != "" {
			if limit, err = parseSize(s); err != nil {
				return "", 0, fmt.Errorf("%s=%q: %w", CacheLimitEnv, s, err)
			}
		}
	}
	return dir, limit, nil
}

// parseSize reads a byte count: 1000000, 64KiB, 256MiB, 1GiB.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, errors.New("not a size in bytes (a whole number, with KiB, MiB or GiB, or none)")
	}
	return n * mult, nil
}

// libraryIdentity names the NVRTC library loaded, and what else decides
// its output, without reading the file: path, device, inode, size and
// modification time, its version, and the bindings' version.
var libraryIdentity = sync.OnceValues(func() (string, error) {
	path, err := LibraryPath()
	if err != nil {
		return "", err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	major, minor, err := Version()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s dev=%d ino=%d size=%d mtime=%d version=%d.%d bindings=%d %s",
		path, st.Dev, st.Ino, st.Size, st.Mtim.Nano(), major, minor, raw.HeaderVersion(), runtime.GOARCH), nil
})

// keyWriter feeds length-prefixed fields to a hash, so that no two
// different sequences of fields give the same stream.
type keyWriter struct{ h io.Writer }

func (w keyWriter) int(n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	w.h.Write(b[:])
}

func (w keyWriter) str(s string) {
	w.int(len(s))
	io.WriteString(w.h, s)
}

func (w keyWriter) strs(ss []string) {
	w.int(len(ss))
	for _, s := range ss {
		w.str(s)
	}
}

// cacheKey returns the key of compiling src with c and the final
// arguments args: everything that decides the result.
func (c *config) cacheKey(src string, args []string) ([32]byte, error) {
	var key [32]byte
	lib, err := libraryIdentity()
	if err != nil {
		return key, err
	}
	dirs, pre, ok := includeDirsOf(args)
	if !ok {
		return key, errUncacheable
	}
	sp := &searchPath{headers: map[string][]string{}, programDir: filepath.Dir(c.name), dirs: dirs}
	for _, h := range c.headers {
		sp.headers[h[0]] = append(sp.headers[h[0]], h[1])
	}
	deps, err := dependencies(src, sp, pre)
	if err != nil {
		return key, err
	}
	h := sha256.New()
	w := keyWriter{h}
	w.str("gocuda nvrtc compile 1")
	w.str(lib)
	w.str(src)
	w.str(c.name)
	w.int(len(c.headers))
	for _, hd := range c.headers {
		w.str(hd[0])
		w.str(hd[1])
	}
	w.strs(c.exprs)
	w.strs(args)
	w.int(len(deps))
	for _, d := range deps {
		w.str(d.path)
		if d.found {
			w.int(1)
			h.Write(d.sum[:])
		} else {
			w.int(0)
		}
	}
	h.Sum(key[:0])
	return key, nil
}

// entry is a cache entry: its file and key, for a lookup and then, on a
// miss, a store.
type entry struct {
	dir, path string
	key       [32]byte
	limit     int64
}

// lookup returns the cached result of the compile, or, on a miss, the
// entry to store its result in; neither when the cache is off or cannot
// key the compile.
func (c *config) lookup(src string, args []string) (*Result, *entry) {
	dir, limit, err := c.cacheSettings()
	if err != nil {
		cacheError(err)
		return nil, nil
	}
	if dir == "" {
		return nil, nil
	}
	key, err := c.cacheKey(src, args)
	if err != nil {
		if errors.Is(err, errUncacheable) {
			stats.uncached.Add(1)
		} else if !errors.Is(err, ErrNoLibrary) {
			cacheError(err)
		}
		return nil, nil
	}
	e := &entry{dir: dir, path: filepath.Join(dir, hex.EncodeToString(key[:])+entrySuffix), key: key, limit: limit}
	res, err := e.load()
	switch {
	case err == nil:
		stats.hits.Add(1)
		return res, nil
	case errors.Is(err, errCorrupt):
		stats.corrupt.Add(1)
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		// A directory that cannot be made fails the store, which
		// reports it.
		cacheError(err)
	}
	stats.misses.Add(1)
	return nil, e
}

const (
	entrySuffix = ".nvrtc"
	tempPrefix  = ".tmp-"
	lockName    = ".evict.lock"
	entryMagic  = "GoNVRTC\x00"
	// entryVersion changes with the layout of an entry or its key.
	entryVersion = 1
	// headerLen: magic, version, reserved, payload length, key, SHA-256
	// of the payload.
	headerLen = 8 + 4 + 4 + 8 + 32 + 32
	// touchAfter: a hit marks its entry used (its modification time,
	// which eviction goes by) unless it was marked this recently.
	touchAfter = time.Minute
	// maxEntry bounds what a read allocates, whatever a corrupt file's
	// size.
	maxEntry = 1 << 32
	// staleTemp: a temporary file this old is a writer's that died.
	staleTemp = time.Hour
)

var errCorrupt = errors.New("corrupt entry")

// load reads and verifies the entry.
func (e *entry) load() (*Result, error) {
	f, err := os.Open(e.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < headerLen || st.Size() > maxEntry {
		return nil, fmt.Errorf("%s: %w: %d bytes", e.path, errCorrupt, st.Size())
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", e.path, errCorrupt, err)
	}
	res, err := decodeEntry(b, e.key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", e.path, errCorrupt, err)
	}
	if now := time.Now(); now.Sub(st.ModTime()) > touchAfter {
		// A read-only cache still answers; it only forgets recency.
		_ = os.Chtimes(e.path, now, now)
	}
	return res, nil
}

// store writes res as the entry, atomically: a reader sees the old file
// or the whole new one. A failure is counted, never returned.
func (e *entry) store(res *Result) {
	b := encodeEntry(res, e.key)
	if int64(len(b)) > e.limit {
		return
	}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		cacheError(err)
		return
	}
	f, err := os.CreateTemp(e.dir, tempPrefix+"*")
	if err != nil {
		cacheError(err)
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), e.path)
	}
	if werr != nil {
		os.Remove(f.Name())
		cacheError(werr)
		return
	}
	stats.stores.Add(1)
	evict(e.dir, e.limit)
}

// evict removes the least recently used entries of dir until the rest
// fit in limit bytes, and temporary files that writers left behind.
//
// Processes evict one at a time, under a lock on a file of the
// directory: a directory listing is no snapshot, and one taken while
// another process removes files may miss a file that stays. Stores go on
// meanwhile, each followed by its own eviction, so the last eviction
// sees every entry.
func evict(dir string, limit int64) {
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		cacheError(err)
		return
	}
	defer lock.Close()
	for {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		cacheError(&fs.PathError{Op: "flock", Path: lock.Name(), Err: err})
		return
	}
	// Closing the file releases the lock.
	des, err := os.ReadDir(dir)
	if err != nil {
		cacheError(err)
		return
	}
	type file struct {
		name  string
		size  int64
		mtime time.Time
	}
	var files []file
	var total int64
	now := time.Now()
	for _, de := range des {
		name := de.Name()
		isEntry, isTemp := strings.HasSuffix(name, entrySuffix), strings.HasPrefix(name, tempPrefix)
		if !isEntry && !isTemp {
			continue
		}
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue // removed meanwhile by another process
		}
		if isTemp {
			if now.Sub(info.ModTime()) > staleTemp {
				os.Remove(filepath.Join(dir, name))
			}
			continue
		}
		files = append(files, file{name, info.Size(), info.ModTime()})
		total += info.Size()
	}
	if total <= limit {
		return
	}
	slices.SortFunc(files, func(a, b file) int {
		if c := a.mtime.Compare(b.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for _, f := range files {
		if total <= limit {
			break
		}
		err := os.Remove(filepath.Join(dir, f.name))
		if err == nil {
			stats.evictions.Add(1)
		}
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
}

// encodeEntry lays out an entry: the header, then the payload of
// length-prefixed fields.
func encodeEntry(res *Result, key [32]byte) []byte {
	var p []byte
	optional := func(b []byte) {
		if b == nil {
			p = binary.AppendUvarint(p, 0)
			return
		}
		p = binary.AppendUvarint(p, uint64(len(b))+1)
		p = append(p, b...)
	}
	str := func(s string) {
		p = binary.AppendUvarint(p, uint64(len(s)))
		p = append(p, s...)
	}
	optional(res.PTX)
	optional(res.CUBIN)
	optional(res.LTOIR)
	str(res.Log)
	names := make([]string, 0, len(res.LoweredNames))
	for k := range res.LoweredNames {
		names = append(names, k)
	}
	slices.Sort(names)
	p = binary.AppendUvarint(p, uint64(len(names)))
	for _, k := range names {
		str(k)
		str(res.LoweredNames[k])
	}

	b := make([]byte, 0, headerLen+len(p))
	b = append(b, entryMagic...)
	b = binary.LittleEndian.AppendUint32(b, entryVersion)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(p)))
	b = append(b, key[:]...)
	sum := sha256.Sum256(p)
	b = append(b, sum[:]...)
	return append(b, p...)
}

// decodeEntry verifies an entry of key and returns its result.
func decodeEntry(b []byte, key [32]byte) (*Result, error) {
	if len(b) < headerLen || string(b[:8]) != entryMagic {
		return nil, errors.New("no entry header")
	}
	if v, r := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:]); v != entryVersion || r != 0 {
		return nil, fmt.Errorf("layout version %d (%#x), not %d", v, r, entryVersion)
	}
	if n := binary.LittleEndian.Uint64(b[16:]); n != uint64(len(b)-headerLen) {
		return nil, fmt.Errorf("payload of %d bytes, header says %d", len(b)-headerLen, n)
	}
	if !bytes.Equal(b[24:56], key[:]) {
		return nil, errors.New("the entry of another key")
	}
	p := b[headerLen:]
	if sum := sha256.Sum256(p); !bytes.Equal(b[56:88], sum[:]) {
		return nil, errors.New("checksum mismatch")
	}
	bad := false
	field := func() []byte {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			bad = true
			return nil
		}
		f := p[k : k+int(n) : k+int(n)]
		p = p[k+int(n):]
		return f
	}
	optional := func() []byte {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k)+1 {
			bad = true
			return nil
		}
		p = p[k:]
		if n == 0 {
			return nil
		}
		f := p[: n-1 : n-1]
		p = p[n-1:]
		return f
	}
	res := &Result{PTX: optional(), CUBIN: optional(), LTOIR: optional()}
	res.Log = string(field())
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return nil, errors.New("bad name count")
	}
	p = p[k:]
	if n > 0 {
		res.LoweredNames = make(map[string]string, n)
		for range n {
			e := string(field())
			res.LoweredNames[e] = string(field())
		}
	}
	if bad || len(p) != 0 {
		return nil, errors.New("malformed payload")
	}
	return res, nil
}
