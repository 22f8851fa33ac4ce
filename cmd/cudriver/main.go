// Command cudriver reports the CUDA driver a Go program needs: every place
// its packages call a binding of package cu, or a function of package cuda
// (or of any other dependency) that reaches one, with the CUDA version that
// binding needs, and the minimum driver for the whole program.
//
//	go run ./cmd/cudriver ./...                      # every use, then the minimum driver
//	go run ./cmd/cudriver -driver 12.0 ./...         # only the uses a 12.0 driver lacks; exit 1 if any
//	go run ./cmd/cudriver -tags cuda13000 ./cmd/app  # with the build tags the program is built with
//
// The packages are loaded as `go build` would load them, with -tags, so the
// bindings are those of the CUDA version the tags select, taken from the
// version of this module the program requires: a function's ABI, and so
// the driver it needs, differ between versions (for the 13.0 bindings
// cuCtxCreate is cuCtxCreate_v4, which a 12.4 driver lacks). -test includes
// the packages' tests.
//
// A version is the first version of the bindings' matrix whose header
// declares the symbol, as cu.Since reports it: the oldest version of the
// matrix stands for that version or earlier, and a function first declared
// by the 12.4 header may be older than 12.4, so the minimum is never below
// what the program needs. Pass it to cu.RequireDriver at startup to refuse
// an older driver with one error.
//
// What it follows: in the packages named, every call of (or reference to) a
// binding of cu, cu.Proc with a constant name, and every call of a function,
// method or package-level variable of a dependency outside the patterns
// that reaches bindings. Inside those dependencies (package cuda, say) it
// follows static calls, function values (cuda passes bindings to a
// reflection helper), package-level variables, calls through an interface
// to every method of theirs that implements it, and cu.Proc: a function
// that calls it is taken to need every binding whose C name it spells as a
// string. Their init functions count for the whole program. It does not
// follow calls through interfaces made in the packages named (a cuda
// handle closed as an io.Closer), nor through function values those
// packages receive from elsewhere, nor reflection other than that of a
// function value; functions that only load the driver (cu.Load,
// cu.DriverVersionLoaded) need no particular version.
//
// A function that does without a binding where the driver lacks it (it
// handles cu.ErrMissingFunction) says so in its doc comment, and its calls
// of that binding do not count:
//
//	//cudriver:optional cuFuncGetParamInfo
//
// Exit status: 0, or 1 when -driver is given and a use needs a newer
// driver, or 2 when the packages cannot be loaded.
package main

import (
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// loadMode loads every package from source: dependencies that reach
// package cu are followed through their function bodies.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
	packages.NeedDeps | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cudriver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tags := fs.String("tags", "", "build tags, as for go build (cuda13000 selects the CUDA 13.0 bindings)")
	driver := fs.String("driver", "", "a CUDA driver version (12.4 or 12040): list only the uses that need a newer one, and exit 1 if any")
	tests := fs.Bool("test", false, "include the packages' tests")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cudriver [-tags tags] [-test] [-driver version] [packages]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	have := 0
	if *driver != "" {
		v, err := parseVersion(*driver)
		if err != nil {
			fmt.Fprintln(stderr, "cudriver: -driver:", err)
			return 2
		}
		have = v
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"."}
	}

	cfg := &packages.Config{Mode: loadMode, Tests: *tests}
	if *tags != "" {
		cfg.BuildFlags = []string{"-tags=" + *tags}
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		fmt.Fprintln(stderr, "cudriver:", err)
		return 2
	}
	// A program that does not type-check cannot be followed.
	failed := false
	for p := range packages.Postorder(pkgs) {
		for _, e := range p.Errors {
			fmt.Fprintln(stderr, e)
			failed = true
		}
	}
	if failed {
		fmt.Fprintln(stderr, "cudriver: the packages do not load")
		return 2
	}
	tab, uses, err := analyze(pkgs)
	if err != nil {
		fmt.Fprintln(stderr, "cudriver:", err)
		return 2
	}
	if tab == nil {
		fmt.Fprintf(stdout, "the packages do not import %s: they need no CUDA driver\n", cuPath)
		return 0
	}
	return report(stdout, stderr, tab, uses, have)
}

// report prints the uses (those newer than have, when have is set) and a
// summary; its result is the exit status.
func report(stdout, stderr io.Writer, tab *table, uses []use, have int) int {
	wd, _ := os.Getwd()
	need, newer := 0, 0
	var why use
	for _, u := range uses {
		if u.Need() > need {
			need, why = u.Need(), u
		}
		if have > 0 && u.Need() <= max(have, tab.floor) {
			continue
		}
		newer++
		fmt.Fprintf(stdout, "%s: %s: %s\n", position(wd, u.Pos), u.Callee, needs(tab, u))
	}
	bindings := fmt.Sprintf("the CUDA %s bindings, %s", versionString(tab.header), filepath.Base(tab.file))
	if need == 0 {
		fmt.Fprintf(stdout, "the packages call no binding (%s)\n", bindings)
		return 0
	}
	// At the oldest version the minimum is not known, and nothing to
	// check at startup.
	summary := fmt.Sprintf("minimum driver: %s (%s)", atLeast(tab, need), bindings)
	if need > tab.floor {
		summary = fmt.Sprintf("minimum driver: %s, for %s at %s (%s); check it at startup with cu.RequireDriver(%d)",
			atLeast(tab, need), why.Callee, position(wd, why.Pos), bindings, need)
	}
	if have == 0 {
		fmt.Fprintln(stdout, summary)
		return 0
	}
	if have < tab.floor {
		fmt.Fprintf(stderr, "cudriver: CUDA %s is older than the oldest version the bindings know (%s): the uses that need %s or earlier are not listed\n",
			versionString(have), versionString(tab.floor), versionString(tab.floor))
	}
	if newer == 0 {
		fmt.Fprintf(stdout, "no use needs a driver newer than CUDA %s; %s\n", versionString(have), summary)
		return 0
	}
	fmt.Fprintf(stdout, "%d uses need a driver newer than CUDA %s; %s\n", newer, versionString(have), summary)
	return 1
}

// needs says what a use needs and, above the oldest version, which
// symbols make it.
func needs(tab *table, u use) string {
	if u.Need() == tab.floor {
		return atLeast(tab, u.Need())
	}
	var syms []string
	for _, f := range u.Funcs {
		if f.Since == u.Need() {
			syms = append(syms, f.Symbol)
		}
	}
	if len(syms) > 3 {
		syms = append(syms[:3], fmt.Sprintf("and %d more", len(syms)-3))
	}
	return atLeast(tab, u.Need()) + " (" + strings.Join(syms, ", ") + ")"
}

// atLeast writes a version; the oldest of the matrix stands for it or an
// earlier one.
func atLeast(tab *table, v int) string {
	if v == tab.floor {
		return "CUDA " + versionString(v) + " or earlier"
	}
	return "CUDA " + versionString(v)
}

func position(wd string, p token.Position) string {
	if rel, err := filepath.Rel(wd, p.Filename); wd != "" && err == nil && !strings.HasPrefix(rel, "..") {
		p.Filename = rel
	}
	return p.String()
}

// parseVersion reads a CUDA version as "12.4", "12" or CUDA_VERSION's
// 12040.
func parseVersion(s string) (int, error) {
	bad := fmt.Errorf("%q is not a CUDA version such as 12.4 or 12040", s)
	major, minor, dotted := strings.Cut(s, ".")
	ma, err := strconv.Atoi(major)
	if err != nil || ma <= 0 {
		return 0, bad
	}
	if !dotted {
		switch {
		case ma >= 1000:
			return ma, nil
		case ma < 100:
			return ma * 1000, nil
		}
		return 0, bad
	}
	minor, _, _ = strings.Cut(minor, ".") // a patch level does not change the API
	mi, err := strconv.Atoi(minor)
	if err != nil || mi < 0 || mi > 99 || ma >= 100 {
		return 0, bad
	}
	return ma*1000 + mi*10, nil
}

func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }
