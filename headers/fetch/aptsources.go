package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// aptSource is one "deb" source of the machine's apt configuration.
type aptSource struct {
	URIs   []string
	Suites []string
}

// archiveURIs returns the URIs of the machine's Debian archive mirrors, read
// from the apt configuration under root ("/" on a real system). The mirror is
// never hard-coded: the machine's own choice may be a local mirror or a proxy
// that is the only way out.
func archiveURIs(root string) ([]string, error) {
	var srcs []aptSource
	read := func(path string, parse func(io.Reader) ([]aptSource, error)) error {
		f, err := os.Open(path)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		s, err := parse(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		srcs = append(srcs, s...)
		return nil
	}
	etc := filepath.Join(root, "etc", "apt")
	if err := read(filepath.Join(etc, "sources.list"), parseOneLine); err != nil {
		return nil, err
	}
	for _, pat := range []struct {
		glob  string
		parse func(io.Reader) ([]aptSource, error)
	}{{"*.list", parseOneLine}, {"*.sources", parseDeb822}} {
		files, _ := filepath.Glob(filepath.Join(etc, "sources.list.d", pat.glob))
		for _, f := range files {
			if err := read(f, pat.parse); err != nil {
				return nil, err
			}
		}
	}
	uris := mainArchiveURIs(srcs)
	if len(uris) == 0 {
		return nil, fmt.Errorf("no Debian archive found in %s/sources.list or %s/sources.list.d (need a \"deb\" entry for a release suite, not only -security/-updates/-backports)", etc, etc)
	}
	return uris, nil
}

// mainArchiveURIs keeps the URIs that serve a release suite. The security,
// updates and backports archives never carry the pinned package versions, and
// the security archive often lives at a different URI.
func mainArchiveURIs(srcs []aptSource) []string {
	var uris []string
	for _, s := range srcs {
		if !slices.ContainsFunc(s.Suites, isReleaseSuite) {
			continue
		}
		for _, u := range s.URIs {
			u = strings.TrimSuffix(u, "/")
			if !slices.Contains(uris, u) {
				uris = append(uris, u)
			}
		}
	}
	return uris
}

func isReleaseSuite(suite string) bool {
	for _, suffix := range []string{"-security", "-updates", "-backports", "/updates"} {
		if strings.HasSuffix(suite, suffix) {
			return false
		}
	}
	return suite != ""
}

// parseOneLine reads the classic format: "deb [opts] URI suite [components]".
func parseOneLine(r io.Reader) ([]aptSource, error) {
	var srcs []aptSource
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "deb" {
			continue // deb-src and blank lines
		}
		f = f[1:]
		// Options may be spelled "[opt]" or "[ opt opt ]".
		if len(f) > 0 && strings.HasPrefix(f[0], "[") {
			for len(f) > 0 {
				end := strings.HasSuffix(f[0], "]")
				f = f[1:]
				if end {
					break
				}
			}
		}
		if len(f) < 2 {
			continue
		}
		srcs = append(srcs, aptSource{URIs: []string{f[0]}, Suites: []string{f[1]}})
	}
	return srcs, sc.Err()
}

// parseDeb822 reads the stanza format of *.sources files.
func parseDeb822(r io.Reader) ([]aptSource, error) {
	var srcs []aptSource
	fields := map[string]string{}
	var last string
	flush := func() {
		if len(fields) == 0 {
			return
		}
		types := strings.Fields(fields["types"])
		if slices.Contains(types, "deb") && !strings.EqualFold(fields["enabled"], "no") {
			srcs = append(srcs, aptSource{
				URIs:   strings.Fields(fields["uris"]),
				Suites: strings.Fields(fields["suites"]),
			})
		}
		clear(fields)
		last = ""
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "#"):
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				fields[last] += " " + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("malformed line %q", line)
			}
			last = strings.ToLower(strings.TrimSpace(k))
			fields[last] = strings.TrimSpace(v)
		}
	}
	flush()
	return srcs, sc.Err()
}
