//go:build linux && (amd64 || arm64)

package nccl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/fakenccl"
)

func TestEnvironment(t *testing.T) {
	torch := map[string]string{"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	ompi := map[string]string{"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
	slurm := map[string]string{"SLURM_PROCID": "2", "SLURM_NTASKS": "3", "SLURM_LOCALID": "0"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Config // compared without Device, Token, Logf
		err  string
	}{
		{"torchrun by hand", torch, Config{Rank: 3, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2, Addr: "10.0.0.1:29500", Source: "RANK and WORLD_SIZE"}, ""},
		{"torchrun's agent store", with(torch, "TORCHELASTIC_RUN_ID", "x", "TORCHELASTIC_USE_AGENT_STORE", "True"),
			Config{Rank: 3, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2, Addr: "10.0.0.1:29501", Source: "torchrun"}, ""},
		{"port of our own", with(torch, "TORCHELASTIC_USE_AGENT_STORE", "True", PortEnv, "4000"),
			Config{Rank: 3, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2, Addr: "10.0.0.1:4000", Source: "RANK and WORLD_SIZE"}, ""},
		{"no local rank: one machine", with(torch, "LOCAL_RANK", "-", "LOCAL_WORLD_SIZE", "-"),
			Config{Rank: 3, WorldSize: 4, LocalRank: 3, Addr: "10.0.0.1:29500", Source: "RANK and WORLD_SIZE"}, ""},
		{"Open MPI", with(ompi, "MASTER_ADDR", "h", "MASTER_PORT", "1"),
			Config{Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, Addr: "h:1", Source: "Open MPI"}, ""},
		{"Slurm", with(slurm, "MASTER_ADDR", "h", "MASTER_PORT", "1"),
			Config{Rank: 2, WorldSize: 3, Addr: "h:1", Source: "Slurm"}, ""},
		{"RANK wins over Open MPI and Slurm", with(with(torch, "OMPI_COMM_WORLD_RANK", "7", "OMPI_COMM_WORLD_SIZE", "9"), "SLURM_PROCID", "0", "SLURM_NTASKS", "1"),
			Config{Rank: 3, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2, Addr: "10.0.0.1:29500", Source: "RANK and WORLD_SIZE"}, ""},
		{"Open MPI wins over Slurm", with(with(ompi, "SLURM_PROCID", "0", "SLURM_NTASKS", "1"), "MASTER_ADDR", "h", "MASTER_PORT", "1"),
			Config{Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, Addr: "h:1", Source: "Open MPI"}, ""},
		{"nothing", map[string]string{}, Config{}, "no launcher's variables"},
		{"Open MPI without MASTER_ADDR", ompi, Config{}, "Open MPI gives the rank but not rank 0's address: set MASTER_ADDR"},
		{"Slurm without MASTER_PORT", with(slurm, "MASTER_ADDR", "h"), Config{}, "set MASTER_ADDR (rank 0's host) and MASTER_PORT"},
		{"RANK without WORLD_SIZE", with(torch, "WORLD_SIZE", "-"), Config{}, "but WORLD_SIZE is not"},
		{"WORLD_SIZE without RANK", with(torch, "RANK", "-"), Config{}, "but RANK is not"},
		{"malformed RANK", with(torch, "RANK", "three"), Config{}, `RANK="three" is not a number`},
		{"negative LOCAL_RANK", with(torch, "LOCAL_RANK", "-1"), Config{}, `LOCAL_RANK="-1" is not a number`},
		{"rank out of range", with(torch, "RANK", "4"), Config{}, "rank 4 is out of range: the world has 4 ranks, 0 to 3"},
		{"no world", with(torch, "WORLD_SIZE", "0"), Config{}, "a world of 0 ranks"},
		{"local rank out of range", with(torch, "LOCAL_RANK", "2"), Config{}, "local rank 2 of 2 local ranks"},
		{"malformed port", with(torch, "MASTER_PORT", "http"), Config{}, `port "http"`},
		{"port out of range", with(torch, "MASTER_PORT", "70000"), Config{}, `port "70000"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := configFrom(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Device != AutoDevice {
				t.Errorf("Device %d, want AutoDevice", got.Device)
			}
			got.Device = 0
			if got.Logf != nil || got.Token != "" {
				t.Errorf("token %q, logf set %v", got.Token, got.Logf != nil)
			}
			got.Logf = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	cfg, err := configFrom(func(k string) (string, bool) {
		v, ok := with(torch, TokenEnv, "s3cret")[k]
		return v, ok
	})
	if err != nil || cfg.Token != "s3cret" {
		t.Errorf("token %q (%v), want it from %s", cfg.Token, err, TokenEnv)
	}
}

// The child processes of the launch tests run TestLaunchChild with the
// variables a launcher sets, and print one line that says how it ended.
const (
	launchChild   = "GOCUDA_TEST_LAUNCH"
	launchTimeout = "GOCUDA_TEST_LAUNCH_TIMEOUT"
	launchExit    = "GOCUDA_TEST_LAUNCH_EXIT" // the rank that exits at once
	launchOK      = "LAUNCH-OK"
	launchErr     = "LAUNCH-ERROR: "
)

// TestLaunchChild is one rank of a job of the launch tests: FromEnvironment,
// then an all-reduce and an all-gather, checked.
func TestLaunchChild(t *testing.T) {
	if os.Getenv(launchChild) == "" {
		t.Skip("run by the launch tests")
	}
	d, err := time.ParseDuration(os.Getenv(launchTimeout))
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c, err := FromEnvironment(ctx, WithLogf(func(f string, args ...any) { fmt.Printf(f+"\n", args...) }))
	if err != nil {
		fmt.Printf("%s%v\n", launchErr, err)
		return
	}
	defer c.Close()
	r, n := c.Rank(), c.Size()
	if os.Getenv(launchExit) == strconv.Itoa(r) {
		os.Exit(3) // a rank that dies
	}
	const m = 1000
	host := make([]float32, m)
	for j := range host {
		host[j] = float32((r + 1) * (j + 1))
	}
	x := upload(t, c, host)
	must(t, AllReduce(c, x, x, Sum))
	all, err := cuda.AllocSlice[int32](c.Stream().Context(), n*3)
	must(t, err)
	defer all.Close()
	mine := upload(t, c, []int32{int32(r), int32(10 * r), int32(100 * r)})
	must(t, AllGather(c, mine, all))
	must(t, c.Stream().Synchronize())
	if err := c.AsyncError(); err != nil {
		fmt.Printf("%s%v\n", launchErr, err)
		return
	}
	must(t, x.CopyTo(host))
	for j, g := range host {
		if want := float32(n * (n + 1) / 2 * (j + 1)); g != want {
			t.Fatalf("rank %d: element %d of the sum is %v, want %v", r, j, g, want)
		}
	}
	got := make([]int32, n*3)
	must(t, all.CopyTo(got))
	for j, g := range got {
		if want := int32(j/3) * []int32{1, 10, 100}[j%3]; g != want {
			t.Fatalf("rank %d: element %d of the gather is %v, want %v", r, j, g, want)
		}
	}
	must(t, c.Shutdown(ctx))
	fmt.Printf("%s rank %d of %d on device %d\n", launchOK, r, n, c.Device())
}

// job is the ranks of a launch test, each a child process.
type job struct {
	t     *testing.T
	addr  string
	world int
	procs []*rankProc
}

type rankProc struct {
	rank  int
	cmd   *exec.Cmd
	out   strings.Builder
	done  chan struct{}
	start time.Time
	took  time.Duration
}

// newJob makes a job of world ranks at a free port of this machine.
func newJob(t *testing.T, world int) *job {
	t.Helper()
	needNCCL(t)
	n, err := cuda.DeviceCount()
	if err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	if !fakenccl.Active() && n < world {
		t.Skipf("%d CUDA device(s): %d ranks need a GPU each", n, world)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return &job{t: t, addr: addr, world: world}
}

// start runs one rank with the variables torchrun sets, changed by kv
// (name, value pairs; value "-" unsets), within timeout.
func (j *job) start(rank int, timeout time.Duration, kv ...string) *rankProc {
	j.t.Helper()
	host, port, _ := net.SplitHostPort(j.addr)
	env := map[string]string{
		"MASTER_ADDR": host, "MASTER_PORT": port,
		"RANK": strconv.Itoa(rank), "WORLD_SIZE": strconv.Itoa(j.world),
		"LOCAL_RANK": strconv.Itoa(rank), "LOCAL_WORLD_SIZE": strconv.Itoa(j.world),
		TokenEnv: "job-token", launchChild: "1", launchTimeout: timeout.String(),
	}
	if fakenccl.Active() {
		env["FAKECUDA_DEVICES"] = strconv.Itoa(j.world)
	}
	for i := 0; i < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLaunchChild$", "-test.v", "-test.count=1")
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if _, ours := env[k]; !ours && !launcherVar(k) {
			cmd.Env = append(cmd.Env, e)
		}
	}
	for k, v := range env {
		if v != "-" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	p := &rankProc{rank: rank, cmd: cmd, done: make(chan struct{}), start: time.Now()}
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	must(j.t, cmd.Start())
	go func() {
		cmd.Wait()
		p.took = time.Since(p.start)
		close(p.done)
	}()
	j.t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	j.procs = append(j.procs, p)
	return p
}

// launcherVar reports a variable of a launcher, which the children must
// not inherit from the test's own environment.
func launcherVar(k string) bool {
	for _, f := range families {
		if k == f.rank || k == f.size || k == f.local || k == f.lsize {
			return true
		}
	}
	return strings.HasPrefix(k, "TORCHELASTIC_") || k == "MASTER_ADDR" || k == "MASTER_PORT" || k == PortEnv || k == TokenEnv
}

// result waits for p and returns "" when it passed, else its error line.
func (p *rankProc) result(t *testing.T) string {
	t.Helper()
	<-p.done
	out := p.out.String()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, launchOK) {
			if !strings.Contains(out, "--- PASS: TestLaunchChild") {
				t.Fatalf("rank %d: passed the launch but not the test:\n%s", p.rank, out)
			}
			return ""
		}
		if rest, ok := strings.CutPrefix(line, launchErr); ok {
			return rest
		}
	}
	t.Fatalf("rank %d: neither passed nor failed the launch:\n%s", p.rank, out)
	return ""
}

// wantErr waits for p and checks that it failed, saying each of says.
func (p *rankProc) wantErr(t *testing.T, says ...string) {
	t.Helper()
	got := p.result(t)
	if got == "" {
		t.Fatalf("rank %d made its communicator, want an error saying %q", p.rank, says)
	}
	for _, s := range says {
		if !strings.Contains(got, s) {
			t.Errorf("rank %d: error %q, want it to say %q", p.rank, got, s)
		}
	}
	t.Logf("rank %d after %v: %s", p.rank, p.took.Round(time.Millisecond), got)
}

func (p *rankProc) wantOK(t *testing.T) {
	t.Helper()
	if got := p.result(t); got != "" {
		t.Errorf("rank %d: %s", p.rank, got)
	}
}

func TestLaunchAllReduce(t *testing.T) {
	for world := 2; world <= 4; world++ {
		t.Run(fmt.Sprint(world), func(t *testing.T) {
			j := newJob(t, world)
			if world == 3 {
				// The peers start first and retry until rank 0 listens.
				for r := 1; r < world; r++ {
					j.start(r, 30*time.Second)
				}
				time.Sleep(300 * time.Millisecond)
				j.start(0, 30*time.Second)
			} else {
				for r := range world {
					j.start(r, 30*time.Second)
				}
			}
			for _, p := range j.procs {
				p.wantOK(t)
			}
		})
	}
}

// TestLaunchRankDies: a rank that exits after the init does not leave
// the others waiting in a collective (on the fake NCCL, which sees its
// process die; NCCL's kernels would wait, and a program aborts the
// communicator when its own deadline passes).
func TestLaunchRankDies(t *testing.T) {
	j := newJob(t, 3)
	if !fakenccl.Active() {
		t.Skip("NCCL's collectives wait for a dead rank until aborted")
	}
	var ps []*rankProc
	for r := range 3 {
		ps = append(ps, j.start(r, 30*time.Second, launchExit, "2", "FAKENCCL_TIMEOUT", "20"))
	}
	for _, p := range ps[:2] {
		p.wantErr(t, "rank 2 (process ", "will never take part")
	}
	checkFast(t, j, 15*time.Second)
}

func TestLaunchRankMissing(t *testing.T) {
	t.Run("rank 0 times out first", func(t *testing.T) {
		j := newJob(t, 3)
		r0 := j.start(0, time.Second)
		r1 := j.start(1, 20*time.Second)
		r0.wantErr(t, "rank(s) 2 of 3 never reached rank 0", context.DeadlineExceeded.Error())
		r1.wantErr(t, "rank 1 of 3: rank 0 at "+j.addr+": rank(s) 2 of 3 never reached rank 0")
		if r1.took > 15*time.Second {
			t.Errorf("rank 1 took %v: rank 0's failure did not reach it", r1.took)
		}
	})
	t.Run("a peer times out first", func(t *testing.T) {
		j := newJob(t, 3)
		r0 := j.start(0, 2*time.Second)
		r1 := j.start(1, 500*time.Millisecond)
		r1.wantErr(t, "reached rank 0 at "+j.addr+" and waited for the other ranks", context.DeadlineExceeded.Error())
		r0.wantErr(t, "rank(s) 2 of 3 never reached rank 0")
	})
	t.Run("rank 0 never comes", func(t *testing.T) {
		j := newJob(t, 2)
		j.start(1, 500*time.Millisecond).wantErr(t, "rank 0 never answered at "+j.addr, context.DeadlineExceeded.Error())
	})
}

// checkFast fails if a failure took nearly the whole timeout: it must be
// told, not waited out.
func checkFast(t *testing.T, j *job, limit time.Duration) {
	t.Helper()
	for _, p := range j.procs {
		<-p.done
		if p.took > limit {
			t.Errorf("rank %d took %v", p.rank, p.took)
		}
	}
}

func TestLaunchDuplicateRank(t *testing.T) {
	j := newJob(t, 3)
	r0 := j.start(0, 20*time.Second)
	a := j.start(1, 20*time.Second)
	b := j.start(1, 20*time.Second)
	for _, p := range []*rankProc{r0, a, b} {
		p.wantErr(t, "rank 1 came twice", "each rank needs a rank of its own")
	}
	checkFast(t, j, 10*time.Second)
}

func TestLaunchWrongWorldSize(t *testing.T) {
	j := newJob(t, 2)
	r0 := j.start(0, 20*time.Second)
	r1 := j.start(1, 20*time.Second, "WORLD_SIZE", "3", "LOCAL_WORLD_SIZE", "-")
	for _, p := range []*rankProc{r0, r1} {
		p.wantErr(t, "rank 1 (from ", "says the world has 3 ranks, rank 0 says 2")
	}
	checkFast(t, j, 10*time.Second)
}

func TestLaunchOutOfRange(t *testing.T) {
	j := newJob(t, 2)
	j.start(2, 20*time.Second).wantErr(t, "rank 2 is out of range: the world has 2 ranks")
	checkFast(t, j, 10*time.Second)
}

// TestLaunchStrangers: while rank 0 waits for rank 1, a process with
// another token, one that sends garbage and one that sends nothing
// connect; rank 0 drops the first two, and the job starts.
func TestLaunchStrangers(t *testing.T) {
	j := newJob(t, 2)
	r0 := j.start(0, 30*time.Second)
	j.start(1, 10*time.Second, TokenEnv, "another-token").wantErr(t, "refused this rank's job token", TokenEnv)
	idle := dial(t, j.addr)
	defer idle.Close()
	garbage := dial(t, j.addr)
	defer garbage.Close()
	junk := make([]byte, 256)
	for i := range junk {
		junk[i] = byte(i * 7)
	}
	_, err := garbage.Write(junk)
	must(t, err)
	garbage.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 512)
	var n int
	for err == nil {
		var m int
		m, err = garbage.Read(buf)
		n += m
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("rank 0 kept the connection that sent garbage open")
	}
	t.Logf("garbage: rank 0 sent %d bytes (its hello) and closed: %v", n, err)
	j.start(1, 30*time.Second).wantOK(t)
	r0.wantOK(t)
	if got := strings.Count(r0.out.String(), "nccl: rank 0: dropped"); got != 2 {
		t.Errorf("rank 0 dropped %d connections, want 2:\n%s", got, r0.out.String())
	}
}

// dial connects to rank 0, retrying until it listens.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return c
		}
		if time.Now().After(end) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRendezvousCanceled: a canceled (not timed out) context ends the
// waits of both sides too.
func TestRendezvousCanceled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	for r := range 2 {
		cfg := Config{Rank: r, WorldSize: 3, Addr: addr}
		go func() {
			_, err := cfg.rendezvous(ctx, func() (UniqueID, error) { return UniqueID{1}, nil })
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	for range 2 {
		select {
		case err := <-errs:
			if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "never reached") {
				t.Errorf("error %v, want context.Canceled", err)
			}
			t.Log(err)
		case <-time.After(10 * time.Second):
			t.Fatal("the rendezvous did not end at the cancel")
		}
	}
}
