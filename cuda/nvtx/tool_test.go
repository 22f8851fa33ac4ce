//go:build linux && cgo

package nvtx_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda/nvtx"
	"github.com/gocuda/gocuda/internal/fakenvtx"
)

// initLine is the fake's first line when it finds the export tables and
// module tables of NVTX v3: the callbacks table is 16 bytes, the version
// table 24; the modules have 16, 9, 15, 7, 16 and 7 entries, counting id
// 0; modules 0 and 7 are refused.
const initLine = "init etid0=null callbacks=16 version=3/24 modules: core=16 cuda=9 opencl=15 cudart=7 core2=16 sync=7 unknown=refused"

// plain is the attribute list of an event with only a message.
func plain(msg string) string {
	return fmt.Sprintf("v3/48 %q cat=0 color=none/0 payload=none", msg)
}

func diffLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		g, w := "<none>", "<none>"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "! "
		}
		fmt.Fprintf(&b, "%s%3d got  %s\n%s    want %s\n", mark, i, g, mark, w)
	}
	t.Errorf("%s differ:\n%s", what, b.String())
}

// The tool gets every call the Go code made, in order, with the
// attributes, domains, registered strings and range ids the code gave, and
// the Go code gets the ids and depths the tool returned.
func TestToolRecordsEveryCallWithItsAttributes(t *testing.T) {
	out, log := child(t, "record", nvtx.InjectionEnv+"="+toolPath(t))
	diffLines(t, "the child's output", out, []string{
		"enabled=true",
		"failure=none",
		"outer id=1",
		"push 0 1 pop 1 0 -1",
		"same domain=true name=myapp",
		"domain push 0 pop 0",
		"domain range id=3",
	})
	diffLines(t, "the tool's log", log, []string{
		initLine,
		"mark " + plain("hello"),
		"start " + plain("outer") + " -> 1",
		`mark v3/48 "colored" cat=7 color=ff010203 payload=i64:-5`,
		`category 7 "io"`,
		"start " + plain("inner") + " -> 2",
		"end 2",
		"end 1",
		"push " + plain("p1") + " -> 0",
		`push v3/48 "p2" cat=0 color=none/0 payload=f64:2.5 -> 1`,
		"pop -> 1",
		"pop -> 0",
		"pop -> -1",
		`domain_create "myapp"`,
		`domain_category myapp 1 "decode"`,
		"domain_mark myapp " + plain("dm"),
		`register myapp "frame"`,
		`domain_start myapp v3/48 reg(myapp)"frame" cat=0 color=ff0000ff payload=u32:9 -> 3`,
		"domain_push myapp " + plain("dp") + " -> 0",
		"domain_pop myapp -> 0",
		"domain_end myapp 3",
		`domain_mark myapp v3/48 reg(myapp)"frame" cat=0 color=none/0 payload=none`,
		"mark " + plain("frame"),
		`domain_create "other"`,
		"domain_mark other " + plain("frame"),
		"mark " + plain(strings.Repeat("x", 300)),
		"mark " + plain(""),
		`mark v3/48 "u64" cat=0 color=none/0 payload=u64:18446744073709551615`,
		`mark v3/48 "i32" cat=0 color=none/0 payload=i32:-7`,
		`mark v3/48 "f32" cat=0 color=80ff0010 payload=f32:0.25`,
		`start v3/48 "with" cat=3 color=none/0 payload=none -> 4`,
		"end 4",
		"start " + plain("started with") + " -> 5",
		"end 5",
	})
}

// A tool that implements only the CORE module gets the default domain's
// events; a named domain's have no function to go to, and Push and Pop
// in it say so.
func TestToolWithoutCore2GetsOnlyTheDefaultDomain(t *testing.T) {
	out, log := child(t, "coreonly", nvtx.InjectionEnv+"="+toolPath(t), fakenvtx.ModulesEnv+"=core")
	diffLines(t, "the child's output", out, []string{
		"enabled=true",
		"failure=none",
		fmt.Sprintf("domain push=%d pop=%d", nvtx.NotTracked, nvtx.NotTracked),
	})
	diffLines(t, "the tool's log", log, []string{initLine, "mark " + plain("a"), "mark " + plain("z")})
}

// A tool that implements only the CORE2 module gets the default domain's
// events through its domain functions, with NVTX's NULL domain.
func TestToolWithOnlyCore2GetsTheDefaultDomainAsNull(t *testing.T) {
	out, log := child(t, "core2only", nvtx.InjectionEnv+"="+toolPath(t), fakenvtx.ModulesEnv+"=core2")
	diffLines(t, "the child's output", out, []string{"enabled=true", "failure=none", "push=0 pop=0"})
	diffLines(t, "the tool's log", log, []string{
		initLine,
		"domain_mark null " + plain("a"),
		"domain_start null " + plain("b") + " -> 1",
		"domain_end null 1",
		`domain_category null 4 "four"`,
		"domain_push null " + plain("c") + " -> 0",
		"domain_pop null -> 0",
	})
}

// A tool whose entry point returns 0 is not attached, and the slots it
// filled before refusing are never called.
func TestToolThatRefusesIsNotCalled(t *testing.T) {
	path := toolPath(t)
	out, log := child(t, "attach", nvtx.InjectionEnv+"="+path, fakenvtx.InitResultEnv+"=0")
	diffLines(t, "the child's output", out, []string{
		"enabled=false",
		"failure=initializing the tool path=" + path,
		fmt.Sprintf("push=%d pop=%d", nvtx.NotTracked, nvtx.NotTracked),
	})
	diffLines(t, "the tool's log", log, []string{initLine, "init refused"})
}

// A path that names no library, and a library that is no NVTX tool,
// leave the package disabled, with the reason, and every call harmless.
func TestBadToolPathLeavesNVTXDisabled(t *testing.T) {
	noentry, err := fakenvtx.BuildWithoutEntry("")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-tool.so")
	notALibrary := filepath.Join(t.TempDir(), "not-a-library.so")
	if err := os.WriteFile(notALibrary, []byte("not ELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, stage string }{
		{missing, "loading the library"},
		{notALibrary, "loading the library"},
		{noentry, "finding InitializeInjectionNvtx2"},
	} {
		out, log := child(t, "attach", nvtx.InjectionEnv+"="+c.path)
		diffLines(t, "the output of the child with "+c.path, out, []string{
			"enabled=false",
			"failure=" + c.stage + " path=" + c.path,
			fmt.Sprintf("push=%d pop=%d", nvtx.NotTracked, nvtx.NotTracked),
		})
		if len(log) != 0 {
			t.Errorf("with %s the tool logged %q", c.path, log)
		}
	}
}

var (
	startRE = regexp.MustCompile(`^(?:domain_)?start (?:shared )?v3/48 (.*) -> (\d+)$`)
	endRE   = regexp.MustCompile(`^(?:domain_)?end (?:shared )?(\d+)$`)
)

// Ranges started and ended from many goroutines at once, which move
// between threads, each get one start and one end with the same id, and
// a domain first used by all of them at once is created once.
func TestConcurrentRangesEachStartAndEndOnce(t *testing.T) {
	out, log := child(t, "concurrent", nvtx.InjectionEnv+"="+toolPath(t))
	diffLines(t, "the child's output", out, []string{"enabled=true", "failure=none"})
	started := map[string]string{}
	ended := map[string]bool{}
	counts := map[string]int{}
	for _, line := range log[1:] {
		if m := startRE.FindStringSubmatch(line); m != nil {
			if _, dup := started[m[2]]; dup {
				t.Errorf("range id %s started twice", m[2])
			}
			started[m[2]] = m[1]
			counts["start"]++
			continue
		}
		if m := endRE.FindStringSubmatch(line); m != nil {
			if _, ok := started[m[1]]; !ok || ended[m[1]] {
				t.Errorf("range id %s ended before its start, or twice", m[1])
			}
			ended[m[1]] = true
			counts["end"]++
			continue
		}
		counts[strings.SplitN(line, " ", 2)[0]+" "+strings.SplitN(line, " ", 3)[1]]++
	}
	n := concurrentGoroutines * concurrentRounds
	want := map[string]int{
		"start":                  2 * n,
		"end":                    2 * n,
		"mark v3/48":             n,
		`domain_create "shared"`: 1,
		`register shared`:        1,
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%d lines of %s, want %d", counts[k], k, v)
		}
	}
	if len(counts) != len(want) {
		t.Errorf("lines of other kinds: %v", counts)
	}
	for id, attrs := range started {
		if !ended[id] {
			t.Errorf("range %s (%s) never ended", id, attrs)
		}
		if _, err := strconv.Atoi(id); err != nil {
			t.Errorf("range id %q", id)
		}
	}
}

// With a tool attached an event allocates nothing in Go: its strings
// are copied on the C side, even a name built on the caller's stack.
func TestToolEventsDoNotAllocate(t *testing.T) {
	out, _ := child(t, "allocs", nvtx.InjectionEnv+"="+toolPath(t))
	diffLines(t, "the child's output", out, []string{"enabled=true", "failure=none", "allocs=0"})
}

// child runs scenario in a child process with env added and returns its
// standard output and the fake tool's log, one line each.
func child(t *testing.T, scenario string, env ...string) (stdout, log []string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "calls.log")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+scenario, fakenvtx.LogEnv+"="+logPath)
	cmd.Env = append(cmd.Env, env...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", scenario, err, errb.String())
	}
	if _, err := os.Stat(logPath); err == nil {
		if log, err = fakenvtx.Lines(logPath); err != nil {
			t.Fatal(err)
		}
	}
	stdout = strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	return stdout, log
}

// fakeTool builds the fake tool once per test binary.
var fakeTool = sync.OnceValues(func() (string, error) { return fakenvtx.Build("") })

func toolPath(t *testing.T) string {
	t.Helper()
	path, err := fakeTool()
	if err != nil {
		t.Fatal(err)
	}
	return path
}
