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

// fetchDebian downloads v's package with a, checks it, and caches its header.
func fetchDebian(ctx context.Context, a *aptState, workDir string, v manifest.Version, stderr io.Writer) (string, error) {
	s := v.Source
	// A directory of its own: apt-get download writes into the directory it
	// runs in, and download expects to find nothing else there.
	dir, err := os.MkdirTemp(workDir, v.Version+"-")
	if err != nil {
		return "", err
	}
	// The package is close to a gigabyte and only one file of it is kept.
	defer os.RemoveAll(dir)

	start := time.Now()
	prefix := fmt.Sprintf("CUDA %s: downloading %s", v.Version, s.Package)
	deb, err := a.download(ctx, dir, s.Package, s.PackageVersion, newProgress(stderr, prefix))
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(deb); err == nil {
		fmt.Fprintf(stderr, "CUDA %s: downloaded %s (%d MB) in %s\n", v.Version, filepath.Base(deb), fi.Size()>>20, time.Since(start).Round(time.Second))
	}
	if err := manifest.VerifyFile(deb, s.PackageSHA256); err != nil {
		return "", err
	}
	data, err := extractFromDeb(ctx, deb, s.Path)
	if err != nil {
		return "", err
	}
	if err := manifest.Verify(filepath.Base(deb)+":"+s.Path, data, v.SHA256); err != nil {
		return "", err
	}
	return v.WriteHeader(data)
}

var errNotInArchive = errors.New("not in the archive")

// extractFromDeb returns the content of name, a path inside the package deb.
// dpkg-deb streams the whole data archive, which takes half a minute for the
// CUDA packages, so it is stopped as soon as the file has been read.
func extractFromDeb(ctx context.Context, deb, name string) ([]byte, error) {
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
	data, rerr := readTarEntry(out, name)
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
	want := path.Clean(strings.TrimPrefix(name, "/"))
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: %w", name, errNotInArchive)
		}
		if err != nil {
			return nil, fmt.Errorf("reading tar: %w", err)
		}
		if path.Clean(strings.TrimPrefix(hdr.Name, "/")) != want {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fmt.Errorf("%s is a link to %s, not a file", name, hdr.Linkname)
		default:
			return nil, fmt.Errorf("%s is not a regular file (tar type %q)", name, hdr.Typeflag)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxHeader+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if len(data) > maxHeader {
			return nil, fmt.Errorf("%s is larger than %d MB", name, maxHeader>>20)
		}
		return data, nil
	}
}
