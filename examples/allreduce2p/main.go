// Command allreduce2p all-reduces a buffer across the ranks of a job, one
// process and one GPU each, with NCCL: a launcher starts it (torchrun,
// mpirun, srun, or plain variables), nccl.FromEnvironment reads its rank
// and rank 0's address, the ranks meet there and make the communicator,
// and every rank checks the result.
//
//	torchrun --nproc-per-node=2 --no-python ./allreduce2p
//	MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=0 ./allreduce2p &
//	MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=1 ./allreduce2p
//
// Without a launcher's variables it starts a job of two ranks on this
// machine itself: this program twice, as ranks 0 and 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nccl"
	rawnccl "github.com/gocuda/gocuda/generated/nccl"
)

func main() {
	mib := flag.Int("mib", 64, "buffer size, MiB")
	timeout := flag.Duration("timeout", 60*time.Second, "how long to wait for the other ranks")
	flag.Parse()
	err := run(*mib, *timeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "allreduce2p (rank %s): %v\n", os.Getenv("RANK"), err)
		os.Exit(1)
	}
}

func run(mib int, timeout time.Duration) error {
	if _, err := nccl.Version(); errors.Is(err, rawnccl.ErrNoLibrary) {
		return fmt.Errorf("NCCL is not installed (libnccl.so.2; or set %s): %w", rawnccl.LibraryEnv, err)
	}
	if _, err := nccl.Environment(); err != nil {
		if os.Getenv("RANK") != "" || os.Getenv("WORLD_SIZE") != "" {
			return err
		}
		return spawn(mib, timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	c, err := nccl.FromEnvironment(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rank, n := c.Rank(), c.Size()
	fmt.Printf("rank %d of %d: communicator on GPU %d in %v\n", rank, n, c.Device(), time.Since(start).Round(time.Millisecond))

	elems := mib << 20 / 4
	host := make([]float32, elems)
	for j := range host {
		host[j] = float32(rank+1) * float32(j%5)
	}
	x, err := cuda.AllocSliceFrom(c.Stream().Context(), host)
	if err != nil {
		return err
	}
	defer x.Close()
	start = time.Now()
	if err := nccl.AllReduce(c, x, x, nccl.Sum); err != nil {
		return err
	}
	if err := c.Stream().Synchronize(); err != nil {
		return err
	}
	took := time.Since(start)
	if err := x.CopyTo(host); err != nil {
		return err
	}
	sum := float32(n * (n + 1) / 2)
	for j, g := range host {
		if want := sum * float32(j%5); g != want {
			return fmt.Errorf("element %d is %v, want %v", j, g, want)
		}
	}
	fmt.Printf("rank %d of %d: all-reduce of %d MiB checked (first one, %v)\n", rank, n, mib, took.Round(time.Microsecond))
	return c.Shutdown(ctx)
}

// spawn runs a job of two ranks on this machine, this program twice with
// the variables a launcher would set, at a free port.
func spawn(mib int, timeout time.Duration) error {
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		return fmt.Errorf("%d GPU (%v): two ranks on this machine need a GPU each (start the ranks on two machines with a launcher)", n, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	var cmds []*exec.Cmd
	for rank := range 2 {
		cmd := exec.Command(os.Args[0], "-mib", strconv.Itoa(mib), "-timeout", timeout.String())
		cmd.Env = append(os.Environ(), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+port, "WORLD_SIZE=2", "RANK="+strconv.Itoa(rank), "LOCAL_RANK="+strconv.Itoa(rank), "LOCAL_WORLD_SIZE=2")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		cmds = append(cmds, cmd)
	}
	var first error
	for rank, cmd := range cmds {
		if err := cmd.Wait(); err != nil && first == nil {
			first = fmt.Errorf("rank %d: %w", rank, err)
		}
	}
	return first
}
