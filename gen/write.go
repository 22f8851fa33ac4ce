package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// writeOutputs replaces the generated files of each version in dir. Every
// file is first written to a temporary directory inside dir; only when all
// are written are they renamed into place, so a failure leaves dir as it was.
func writeOutputs(dir string, outputs map[string]Output) error {
	return writeAll(map[string]map[string]Output{dir: outputs}, nil)
}

// writeAll writes the outputs of several packages, by directory: every
// package's files are staged and checked first, so that a failure in any
// of them leaves every directory as it was. libs says which library owns
// each directory's generated files (nil: package cu).
func writeAll(dirs map[string]map[string]Output, libs map[string]*library) error {
	type staged struct {
		dir, tmp     string
		names, stale []string
	}
	var all []*staged
	defer func() {
		for _, st := range all {
			os.RemoveAll(st.tmp)
		}
	}()
	var order []string
	for dir := range dirs {
		order = append(order, dir)
	}
	sort.Strings(order)
	for _, dir := range order {
		outputs := dirs[dir]
		lib := libs[dir]
		if lib == nil {
			lib = cuLib
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cannot create the output directory %s: %w", dir, err)
		}
		tmp, err := os.MkdirTemp(dir, ".gen-")
		if err != nil {
			return fmt.Errorf("cannot write to %s: %w", dir, err)
		}
		st := &staged{dir: dir, tmp: tmp}
		all = append(all, st)
		for _, o := range outputs {
			for name, data := range o {
				if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
					return fmt.Errorf("cannot write %s: %w", name, err)
				}
				st.names = append(st.names, name)
			}
		}
		if st.stale, err = staleFilesOf(lib, dir, outputs); err != nil {
			return err
		}
		sort.Strings(st.names)
		// Renaming over anything but a regular file fails, and would fail
		// after the files before it were already replaced: refuse first.
		for _, name := range st.names {
			if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && !fi.Mode().IsRegular() {
				return fmt.Errorf("cannot write %s: %s is in the way (%s)", name, filepath.Join(dir, name), fi.Mode().Type())
			}
		}
	}
	for _, st := range all {
		for _, name := range st.names {
			if err := os.Rename(filepath.Join(st.tmp, name), filepath.Join(st.dir, name)); err != nil {
				return err
			}
		}
		for _, name := range st.stale {
			if err := os.Remove(filepath.Join(st.dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// staleFilesOf lists files in dir that library l's generator owns for a version it
// generated but did not produce this time.
func staleFilesOf(l *library, dir string, outputs map[string]Output) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, e := range entries {
		for tag, o := range outputs {
			if tag == matrixKey {
				continue
			}
			if _, ok := o[e.Name()]; !ok && l.generatedFor(e.Name(), tag) {
				stale = append(stale, e.Name())
			}
		}
	}
	return stale, nil
}

// checkOutputs compares outputs with dir and reports every difference.
func checkOutputs(dir string, outputs map[string]Output) error {
	return checkOutputsOf(cuLib, dir, outputs)
}

func checkOutputsOf(l *library, dir string, outputs map[string]Output) error {
	var diffs []string
	var tags []string
	for tag := range outputs {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	for _, tag := range tags {
		o := outputs[tag]
		var names []string
		for name := range o {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			have, err := os.ReadFile(filepath.Join(dir, name))
			switch {
			case err != nil:
				diffs = append(diffs, fmt.Sprintf("%s: missing (%v)", name, err))
			case !bytes.Equal(have, o[name]):
				diffs = append(diffs, fmt.Sprintf("%s: differs from a fresh generation (%s)", name, firstDifference(have, o[name])))
			}
		}
	}
	stale, err := staleFilesOf(l, dir, outputs)
	if err != nil {
		return err
	}
	for _, name := range stale {
		diffs = append(diffs, name+": not produced by the generator any more")
	}
	if len(diffs) > 0 {
		return fmt.Errorf("generated code is out of date (run `make generate`):\n  %s", strings.Join(diffs, "\n  "))
	}
	if tags[0] == matrixKey {
		tags[0] = "files of every version"
	}
	fmt.Printf("check: %s: %s up to date\n", l.pkg, strings.Join(tags, ", "))
	return nil
}

func firstDifference(have, want []byte) string {
	hl := strings.Split(string(have), "\n")
	wl := strings.Split(string(want), "\n")
	for i := 0; i < len(hl) && i < len(wl); i++ {
		if hl[i] != wl[i] {
			return fmt.Sprintf("line %d: have %q, want %q", i+1, hl[i], wl[i])
		}
	}
	return fmt.Sprintf("have %d lines, want %d", len(hl), len(wl))
}
