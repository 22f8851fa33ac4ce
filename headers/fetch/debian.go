package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gocuda/gocuda/internal/manifest"
)

const debianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// maxHeader bounds what is read from a package for one header; cuda.h is
// about 1 MB.
const maxHeader = 32 << 20

// aptState is a private apt configuration and package index. Using apt-get
// with its own lists, cache and sources leaves the system's apt state alone,
// needs no root, and reaches the pinned suites whatever the system tracks.
type aptState struct {
	opts []string
}

// newAptState sets up a private apt state in dir whose sources are the
// suites and components that vs need, on each mirror in uris.
func newAptState(dir string, uris []string, vs []manifest.Version) (*aptState, error) {
	for _, tool := range []string{"apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found: Debian-packaged headers need apt-get and dpkg-deb (a Debian or Ubuntu machine)", tool)
		}
	}
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}

	keyring := debianKeyring
	if _, err := os.Stat(keyring); err != nil {
		keyring = "" // then apt's own trusted keys decide
	}
	sources := filepath.Join(dir, "sources.list")
	if err := os.WriteFile(sources, []byte(sourcesList(uris, vs, keyring)), 0o644); err != nil {
		return nil, err
	}

	// Read after the system's apt.conf.d (-c is applied last), so it can drop
	// the system's update hooks: they act on the system's state, not ours.
	conf := "#clear APT::Update::Pre-Invoke;\n" +
		"#clear APT::Update::Post-Invoke;\n" +
		"#clear APT::Update::Post-Invoke-Success;\n"
	if os.Geteuid() == 0 {
		// apt drops to the _apt user to download, but the private dirs sit
		// in root's cache, out of _apt's reach; apt would fall back to root
		// anyway, with a warning.
		conf += "APT::Sandbox::User \"root\";\n"
	}
	aptConf := filepath.Join(dir, "apt.conf")
	if err := os.WriteFile(aptConf, []byte(conf), 0o644); err != nil {
		return nil, err
	}

	return &aptState{opts: []string{
		"-o", "Dir::State::Lists=" + filepath.Join(dir, "lists"),
		"-o", "Dir::Etc::sourcelist=" + sources,
		"-o", "Dir::Etc::sourceparts=-",
		"-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
		"-o", "Debug::NoLocking=1",
		"-o", "APT::Get::List-Cleanup=0",
		"-c", aptConf,
	}}, nil
}

// sourcesList is a one-line sources.list with the suites and components
// that vs need, on each mirror.
func sourcesList(uris []string, vs []manifest.Version, keyring string) string {
	var suites []string
	comps := map[string][]string{}
	for _, v := range vs {
		s := v.Source
		if !slices.Contains(suites, s.Suite) {
			suites = append(suites, s.Suite)
		}
		if !slices.Contains(comps[s.Suite], s.Component) {
			comps[s.Suite] = append(comps[s.Suite], s.Component)
		}
	}
	opt := ""
	if keyring != "" {
		opt = "[signed-by=" + keyring + "] "
	}
	var b strings.Builder
	for _, u := range uris {
		for _, s := range suites {
			fmt.Fprintf(&b, "deb %s%s %s %s\n", opt, u, s, strings.Join(comps[s], " "))
		}
	}
	return b.String()
}

// update fetches the package index of the private sources.
func (a *aptState) update(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "apt-get", append(slices.Clone(a.opts), "update")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return aptError(ctx, "apt-get update", err, out)
	}
	return nil
}

// download fetches pkg=version into dir and returns the .deb's path,
// reporting apt's progress to prog.
func (a *aptState) download(ctx context.Context, dir, pkg, version string, prog *progress) (string, error) {
	status, statusW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer status.Close()
	args := append(slices.Clone(a.opts), "-o", "APT::Status-Fd=3", "download", pkg+"="+version)
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{statusW} // fd 3
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return "", err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(status)
		for sc.Scan() {
			if p, ok := parseDLStatus(sc.Text()); ok {
				prog.update(p)
			}
		}
	}()
	err = cmd.Wait()
	<-done
	if err != nil {
		return "", aptError(ctx, "apt-get download "+pkg+"="+version, err, stderr.Bytes())
	}
	// apt names the file itself (it escapes the version), so find it rather
	// than predict it; dir holds nothing else.
	debs, _ := filepath.Glob(filepath.Join(dir, "*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s=%s: want one .deb in %s, found %d", pkg, version, dir, len(debs))
	}
	return debs[0], nil
}

// aptError reports a failed apt-get run with its error and warning lines,
// which say what went wrong far better than its progress chatter.
func aptError(ctx context.Context, what string, err error, out []byte) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	var keep []string
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "E:") || strings.HasPrefix(l, "W:") || strings.HasPrefix(l, "Err:") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		keep = lines[max(0, len(lines)-5):]
	}
	msg := strings.TrimSpace(strings.Join(keep, "\n  "))
	if msg == "" {
		return fmt.Errorf("%s: %v", what, err)
	}
	return fmt.Errorf("%s: %v:\n  %s", what, err, msg)
}

// fetchDebian downloads v's package with a, checks it, and caches cuda.h
// and every library header v lists, extracted in one pass; then the
// libraries v lists for this machine's architecture, each from its own
// package. What is already cached and verified is not downloaded again.
func fetchDebian(ctx context.Context, a *aptState, workDir string, v manifest.Version, stderr io.Writer) (string, error) {
	s := v.Source
	headerPath, err := v.HeaderPath()
	if err != nil {
		return "", err
	}
	if missingHeaders(v) {
		// One download per package: the source's, and those of headers
		// that another package of the suite has.
		type pkgHeaders struct {
			name, version, sum string
			want, names        map[string]string // path in the package → pinned SHA-256, cache name
		}
		pkgs := []*pkgHeaders{{s.Package, s.PackageVersion, s.PackageSHA256,
			map[string]string{s.Path: v.SHA256}, map[string]string{s.Path: v.MainHeader()}}}
		for _, h := range v.Headers {
			p := pkgs[0]
			if h.Package != "" {
				i := slices.IndexFunc(pkgs, func(p *pkgHeaders) bool { return p.name == h.Package })
				if i < 0 {
					pkgs = append(pkgs, &pkgHeaders{h.Package, h.PackageVersion, h.PackageSHA256, map[string]string{}, map[string]string{}})
					i = len(pkgs) - 1
				}
				p = pkgs[i]
			}
			p.want[h.Path], p.names[h.Path] = h.SHA256, h.Name
		}
		type extracted struct {
			data       []byte
			name, want string
		}
		var all []extracted
		for _, p := range pkgs {
			files, deb, err := downloadAndExtract(ctx, a, workDir, v, p.name, p.version, p.sum, p.want, maxHeader, stderr)
			if err != nil {
				return "", err
			}
			for path, data := range files {
				if err := manifest.Verify(filepath.Base(deb)+":"+path, data, p.want[path]); err != nil {
					return "", err
				}
				all = append(all, extracted{data, p.names[path], p.want[path]})
			}
		}
		// Written only once every file checked out: a mismatch writes nothing.
		for _, e := range all {
			if _, err := v.WriteCached(e.name, e.data, e.want); err != nil {
				return "", err
			}
		}
	}
	for _, l := range hostLibraries(v) {
		if libraryCached(v, l) {
			continue
		}
		files, deb, err := downloadAndExtract(ctx, a, workDir, v, l.Package, l.PackageVersion, l.PackageSHA256, map[string]string{l.Path: l.SHA256}, maxLibrary, stderr)
		if err != nil {
			return "", err
		}
		if err := manifest.Verify(filepath.Base(deb)+":"+l.Path, files[l.Path], l.SHA256); err != nil {
			return "", err
		}
		if _, err := v.WriteCached(filepath.Join("lib", l.Name), files[l.Path], l.SHA256); err != nil {
			return "", err
		}
	}
	return headerPath, nil
}

// maxLibrary bounds what is read from a package for one library;
// libnvrtc.so.12 is about 60 MB.
const maxLibrary = 512 << 20

// downloadAndExtract downloads pkg=version, checks the package's SHA-256
// and returns the files of want (paths inside the package) and the
// package's file name.
func downloadAndExtract(ctx context.Context, a *aptState, workDir string, v manifest.Version, pkg, version, sum string, want map[string]string, limit int64, stderr io.Writer) (map[string][]byte, string, error) {
	// A directory of its own: apt-get download writes into the directory it
	// runs in, and download expects to find nothing else there.
	dir, err := os.MkdirTemp(workDir, v.Version+"-")
	if err != nil {
		return nil, "", err
	}
	// The package may be close to a gigabyte and only a few files of it are kept.
	defer os.RemoveAll(dir)

	start := time.Now()
	prefix := fmt.Sprintf("%s: downloading %s", v.Name(), pkg)
	deb, err := a.download(ctx, dir, pkg, version, newProgress(stderr, prefix))
	if err != nil {
		return nil, "", err
	}
	if fi, err := os.Stat(deb); err == nil {
		fmt.Fprintf(stderr, "%s: downloaded %s (%d MB) in %s\n", v.Name(), filepath.Base(deb), fi.Size()>>20, time.Since(start).Round(time.Second))
	}
	if err := manifest.VerifyFile(deb, sum); err != nil {
		return nil, "", err
	}
	var names []string
	for p := range want {
		names = append(names, p)
	}
	files, err := extractAllFromDeb(ctx, deb, names, limit)
	return files, filepath.Base(deb), err
}

// hostLibraries are the libraries of v for this machine's architecture:
// the packages are per architecture, and so are their checksums.
func hostLibraries(v manifest.Version) []manifest.Library {
	var libs []manifest.Library
	for _, l := range v.Libraries {
		if l.Arch == runtime.GOARCH {
			libs = append(libs, l)
		}
	}
	return libs
}

// libraryCached reports whether the cache holds l, with its pinned SHA-256.
func libraryCached(v manifest.Version, l manifest.Library) bool {
	dir, err := v.LibraryDir()
	return err == nil && manifest.VerifyFile(filepath.Join(dir, l.Name), l.SHA256) == nil
}

// missingHeaders reports whether cuda.h or a library header of v is not
// cached with its pinned SHA-256.
func missingHeaders(v manifest.Version) bool {
	if _, _, err := v.ReadHeader(); err != nil {
		return true
	}
	for _, h := range v.Headers {
		if _, _, err := v.ReadLibraryHeader(h.Name); err != nil {
			return true
		}
	}
	return false
}

// missingAny reports whether anything v lists for this machine is not cached.
func missingAny(v manifest.Version) bool {
	if missingHeaders(v) {
		return true
	}
	for _, l := range hostLibraries(v) {
		if !libraryCached(v, l) {
			return true
		}
	}
	return false
}

var errNotInArchive = errors.New("not in the archive")

// extractFromDeb returns the content of name, a path inside the package deb.
// dpkg-deb streams the whole data archive, which takes half a minute for the
// CUDA packages, so it is stopped as soon as the file has been read.
func extractFromDeb(ctx context.Context, deb, name string) ([]byte, error) {
	files, err := extractAllFromDeb(ctx, deb, []string{name}, maxHeader)
	return files[name], err
}

// extractAllFromDeb returns the content of each of names, paths inside the
// package deb, reading the archive once and no further than the last of
// them; each may have at most limit bytes.
func extractAllFromDeb(ctx context.Context, deb string, names []string, limit int64) (map[string][]byte, error) {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dpkg-deb: %w", err)
	}
	data, rerr := readTarEntries(out, names, limit)
	if !errors.Is(rerr, errNotInArchive) {
		// Closing the pipe stops dpkg-deb: its decompressing child dies of
		// SIGPIPE and dpkg-deb reaps it and exits. A SIGKILL straight away
		// would orphan that child, still decompressing.
		out.Close()
		t := time.AfterFunc(5*time.Second, func() { cmd.Process.Kill() })
		defer t.Stop()
	}
	werr := cmd.Wait()
	switch {
	case rerr == nil:
		return data, nil
	case errors.Is(rerr, errNotInArchive) && werr != nil:
		return nil, fmt.Errorf("dpkg-deb --fsys-tarfile %s: %v: %s", deb, werr, strings.TrimSpace(stderr.String()))
	default:
		return nil, fmt.Errorf("%s: %w", deb, rerr)
	}
}

// readTarEntry returns the content of the regular file name in a tar stream,
// reading no further than that entry.
func readTarEntry(r io.Reader, name string) ([]byte, error) {
	files, err := readTarEntries(r, []string{name}, maxHeader)
	return files[name], err
}

// readTarEntries returns the content of the regular files names in a tar
// stream, keyed as given, reading no further than the last of them.
func readTarEntries(r io.Reader, names []string, limit int64) (map[string][]byte, error) {
	want := map[string]string{} // cleaned → as given
	for _, n := range names {
		want[path.Clean(strings.TrimPrefix(n, "/"))] = n
	}
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for len(want) > 0 {
		hdr, err := tr.Next()
		if err == io.EOF {
			var left []string
			for _, n := range want {
				left = append(left, n)
			}
			slices.Sort(left)
			return nil, fmt.Errorf("%s: %w", strings.Join(left, ", "), errNotInArchive)
		}
		if err != nil {
			return nil, fmt.Errorf("reading tar: %w", err)
		}
		name, ok := want[path.Clean(strings.TrimPrefix(hdr.Name, "/"))]
		if !ok {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fmt.Errorf("%s is a link to %s, not a file", name, hdr.Linkname)
		default:
			return nil, fmt.Errorf("%s is not a regular file (tar type %q)", name, hdr.Typeflag)
		}
		data, err := io.ReadAll(io.LimitReader(tr, limit+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if int64(len(data)) > limit {
			return nil, fmt.Errorf("%s is larger than %d MB", name, limit>>20)
		}
		files[name] = data
		delete(want, path.Clean(strings.TrimPrefix(hdr.Name, "/")))
	}
	return files, nil
}
