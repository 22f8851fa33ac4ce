// Command fetch fills the CUDA header cache that headers/versions.json
// describes: the cuda.h of each version, checked against its pinned SHA-256,
// and the nccl.h of each NCCL version (named as 2.22.3 or nccl22203).
// Debian-packaged versions are downloaded with apt-get through the machine's
// own Debian mirror; toolkit versions are copied from an installed toolkit,
// and file versions from a fixed path on the machine that has them (a copy
// bundled with a Python package, say).
//
//	go run ./headers/fetch [-v] [-version 12.4,11.8,2.22.3] [-cuda-home DIR] [-file 12.8=PATH] [-work DIR]
//
// It prints the versions it fetches, every error, and a line that sums up
// the rest; -v prints every version with the path of its header.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/gocuda/gocuda/internal/manifest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// listFlag collects a flag given several times or as a comma list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// pathFlag collects VERSION=PATH pairs, by version.
type pathFlag map[string]string

func (p pathFlag) String() string {
	var s []string
	for k, v := range p {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (p pathFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if k, v = strings.TrimSpace(k), strings.TrimSpace(v); !ok || k == "" || v == "" {
		return fmt.Errorf("%q: want VERSION=PATH", s)
	}
	if _, dup := p[k]; dup {
		return fmt.Errorf("%s given twice", k)
	}
	p[k] = v
	return nil
}

// outcome is what became of one version.
type outcome struct {
	v       manifest.Version
	path    string
	cached  bool
	skipped bool
	err     error
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fl.SetOutput(stderr)
	manifestPath := fl.String("manifest", "headers/versions.json", "the version manifest")
	var names listFlag
	fl.Var(&names, "version", "CUDA or NCCL `version` to fetch, repeatable or comma-separated (default: all)")
	cudaHome := fl.String("cuda-home", defaultCUDAHome(), "installed CUDA toolkit, for toolkit versions")
	workDir := fl.String("work", "", "download into a temporary directory in `dir`, removed afterwards (default: the cache)")
	files := pathFlag{}
	fl.Var(files, "file", "`VERSION=PATH` of the cuda.h (nccl.h) of a file version, instead of the manifest's path (repeatable; also $GOCUDA_HEADER_<TAG>, e.g. GOCUDA_HEADER_CUDA12080)")
	skipMissing := fl.Bool("skip-missing", true, "skip toolkit and file versions whose header is not on this machine, unless named with -version")
	verbose := fl.Bool("v", false, "print every version, with where its header is cached or was looked for (default: the versions fetched now, errors, and a summary)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "fetch: unexpected arguments %q\n", fl.Args())
		return 2
	}
	m, err := manifest.Load(*manifestPath)
	if err != nil {
		fmt.Fprintf(stderr, "fetch: %v\n", err)
		return 2
	}
	filePaths := map[string]string{} // by version; the flag may name a tag
	for name, path := range files {
		v, err := m.LookupAny(name)
		switch {
		case err != nil:
		case v.Source.Kind != manifest.SourceFile:
			err = fmt.Errorf("%s comes from a %s source, not a file", v.Name(), v.Source.Kind)
		case filePaths[v.Version] != "":
			err = fmt.Errorf("%s given twice", v.Name())
		}
		if err != nil {
			fmt.Fprintf(stderr, "fetch: -file: %v\n", err)
			return 2
		}
		filePaths[v.Version] = path
	}
	selected := m.All()
	named := map[string]bool{}
	if len(names) > 0 {
		selected = nil
		for _, n := range names {
			v, err := m.LookupAny(n)
			if err != nil {
				fmt.Fprintf(stderr, "fetch: %v\n", err)
				return 2
			}
			if !named[v.Version] {
				named[v.Version] = true
				selected = append(selected, v)
			}
		}
	}

	var all, debs []*outcome
	for _, v := range selected {
		o := &outcome{v: v}
		all = append(all, o)
		_, path, err := v.ReadHeader()
		var stale *manifest.ChecksumError
		switch {
		case err == nil && !missingAny(v):
			o.path, o.cached = path, true
			continue
		case err == nil:
			// cuda.h is cached; a library header or library is not.
		case errors.As(err, &stale):
			fmt.Fprintf(stderr, "%s: cached header has the wrong SHA-256, fetching it again\n", v.Name())
		case !errors.Is(err, manifest.ErrNotCached):
			o.err = err
			continue
		}
		switch v.Source.Kind {
		case manifest.SourceToolkit:
			o.path, o.err = importToolkit(v, *cudaHome)
			o.skipped = errors.Is(o.err, errNoToolkit) && *skipMissing && !named[v.Version]
		case manifest.SourceFile:
			o.path, o.err = importFile(v, filePath(v, filePaths))
			o.skipped = errors.Is(o.err, errNoFile) && *skipMissing && !named[v.Version]
		case manifest.SourceDebian:
			debs = append(debs, o)
		}
	}
	if len(debs) > 0 {
		fetchAllDebian(ctx, debs, *workDir, stderr)
	}

	return report(all, *verbose, stdout, stderr)
}

// report prints what became of each version and returns the exit code.
// An error is printed in full always; a version cached before, or skipped
// because this machine lacks its source, only with verbose, as the
// paths that say where are this machine's: otherwise one line sums them up.
func report(all []*outcome, verbose bool, stdout, stderr io.Writer) int {
	code := 0
	var cached, fetched int
	var skipped []string
	for _, o := range all {
		switch {
		case o.skipped:
			skipped = append(skipped, o.v.Name())
			if verbose {
				fmt.Fprintf(stderr, "%s: skipped: %v\n", o.v.Name(), o.err)
			}
		case o.err != nil:
			fmt.Fprintf(stderr, "%s: error: %v\n", o.v.Name(), o.err)
			code = 1
		case o.cached:
			cached++
			if verbose {
				fmt.Fprintf(stdout, "%s: cached %s\n", o.v.Name(), o.path)
			}
		default:
			fetched++
			if verbose {
				fmt.Fprintf(stdout, "%s: ok %s (sha256 %s…)\n", o.v.Name(), o.path, o.v.SHA256[:12])
			} else {
				fmt.Fprintf(stdout, "%s: fetched (sha256 %s…)\n", o.v.Name(), o.v.SHA256[:12])
			}
		}
	}
	summary := fmt.Sprintf("headers: %d of %d versions cached (%d fetched now)", cached+fetched, len(all), fetched)
	if len(skipped) > 0 {
		summary += fmt.Sprintf("; not on this machine: %s", strings.Join(skipped, ", "))
		if !verbose {
			summary += " (-v says where each was looked for)"
		}
	}
	if failed := len(all) - cached - fetched - len(skipped); failed > 0 {
		summary += fmt.Sprintf("; %d failed", failed)
	}
	fmt.Fprintln(stdout, summary)
	return code
}

// aptRoot is where the machine's apt configuration is read from; tests point
// it at a fake one.
var aptRoot = "/"

func defaultCUDAHome() string {
	if h := os.Getenv("CUDA_HOME"); h != "" {
		return h
	}
	return "/usr/local/cuda"
}

// fetchAllDebian fetches the Debian-packaged versions behind one apt-get
// update, recording each one's result in its outcome. It works in a fresh
// directory of its own inside workDir and removes only that: workDir may be
// anyone's, even the cache itself, and what is already there is not fetch's
// to delete or overwrite.
func fetchAllDebian(ctx context.Context, debs []*outcome, workDir string, stderr io.Writer) {
	err := func() error {
		parent := workDir
		if parent == "" {
			// Next to the cache rather than in $TMPDIR, which is often a
			// small tmpfs; each package is close to a gigabyte.
			root, err := manifest.CacheDir()
			if err != nil {
				return err
			}
			if err := os.MkdirAll(root, 0o755); err != nil {
				return err
			}
			parent = root
		} else {
			made, err := mkdirAll(workDir)
			defer removeEmpty(made)
			if err != nil {
				return err
			}
		}
		// apt resolves a relative path against its own directories, not
		// against the working directory, and runs in another one to download.
		parent, err := filepath.Abs(parent)
		if err != nil {
			return err
		}
		work, err := os.MkdirTemp(parent, ".fetch-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)

		uris, err := archiveURIs(aptRoot)
		if err != nil {
			return err
		}
		vs := make([]manifest.Version, len(debs))
		for i, o := range debs {
			vs[i] = o.v
		}
		apt, err := newAptState(filepath.Join(work, "apt"), uris, vs)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "apt-get update (private state, mirror %s)\n", strings.Join(uris, ", "))
		if err := apt.update(ctx); err != nil {
			return err
		}
		for _, o := range debs {
			o.path, o.err = fetchDebian(ctx, apt, work, o.v, stderr)
		}
		return nil
	}()
	if err != nil {
		for _, o := range debs {
			o.err = err
		}
	}
}

// mkdirAll is os.MkdirAll that returns the directories it made, outermost
// first, so that they and only they can be removed afterwards. A directory
// that appears meanwhile is someone else's and is not listed.
func mkdirAll(dir string) (made []string, err error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		switch err := os.Mkdir(missing[i], 0o755); {
		case err == nil:
			made = append(made, missing[i])
		case !errors.Is(err, fs.ErrExist):
			return made, err
		}
	}
	// What is there may be a file, or a link to a directory.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return made, err
	}
	return made, nil
}

// removeEmpty removes the directories made by mkdirAll, innermost first, as
// long as they are empty: one that is not now holds something fetch did not
// put there.
func removeEmpty(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		if os.Remove(made[i]) != nil {
			return
		}
	}
}
