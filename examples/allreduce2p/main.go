// Command allreduce2p all-reduces a buffer across two processes, one GPU
// each, with NCCL: rank 0 makes the communicator's unique id and hands its
// 128 bytes to rank 1 over a TCP socket, the protocol that spans machines
// too. Both check the result.
//
//	allreduce2p                          spawns rank 1 itself, both on this machine
//	allreduce2p -rank 0 -addr :29500     rank 0: listens for rank 1
//	allreduce2p -rank 1 -addr host:29500 rank 1: fetches the id from rank 0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nccl"
	rawnccl "github.com/gocuda/gocuda/generated/nccl"
)

func main() {
	rank := flag.Int("rank", -1, "this process's rank, 0 or 1 (default: spawn rank 1 and be rank 0)")
	addr := flag.String("addr", "127.0.0.1:0", "rank 0's address for the unique id")
	device := flag.Int("device", -1, "GPU to use (default: the rank, modulo the GPUs)")
	mib := flag.Int("mib", 64, "buffer size, MiB")
	timeout := flag.Duration("timeout", 60*time.Second, "how long to wait for the other rank")
	flag.Parse()
	err := run(*rank, *addr, *device, *mib, *timeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "allreduce2p (rank %d): %v\n", *rank, err)
		os.Exit(1)
	}
}

func run(rank int, addr string, device, mib int, timeout time.Duration) error {
	if _, err := nccl.Version(); errors.Is(err, rawnccl.ErrNoLibrary) {
		return fmt.Errorf("NCCL is not installed (libnccl.so.2; or set %s): %w", rawnccl.LibraryEnv, err)
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var child *exec.Cmd
	var id nccl.UniqueID
	switch rank {
	case -1, 0:
		if rank == -1 && n < 2 {
			return fmt.Errorf("%d GPU: two processes on this machine need a GPU each (run the ranks on two machines with -rank and -addr)", n)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		defer ln.Close()
		if id, err = nccl.NewUniqueID(); err != nil {
			return err
		}
		if rank == -1 {
			rank = 0
			child = exec.Command(os.Args[0], "-rank", "1", "-addr", ln.Addr().String(), "-mib", fmt.Sprint(mib), "-timeout", timeout.String())
			child.Stdout, child.Stderr = os.Stdout, os.Stderr
			if err := child.Start(); err != nil {
				return err
			}
		}
		fmt.Printf("rank 0: waiting for rank 1 on %s\n", ln.Addr())
		if err := sendID(ctx, ln, id); err != nil {
			return err
		}
	case 1:
		if id, err = fetchID(ctx, addr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("rank %d: two ranks, 0 and 1", rank)
	}
	if device < 0 {
		device = rank % n
	}
	err = allReduce(ctx, rank, device, mib, id)
	if child != nil {
		if cerr := child.Wait(); err == nil && cerr != nil {
			err = fmt.Errorf("rank 1: %w", cerr)
		}
	}
	return err
}

// sendID accepts rank 1's connection and writes the id's bytes to it.
func sendID(ctx context.Context, ln net.Listener, id nccl.UniqueID) error {
	if d, ok := ctx.Deadline(); ok {
		ln.(*net.TCPListener).SetDeadline(d)
	}
	conn, err := ln.Accept()
	if err != nil {
		return fmt.Errorf("waiting for rank 1: %w", err)
	}
	defer conn.Close()
	b, _ := id.MarshalBinary()
	_, err = conn.Write(b)
	return err
}

// fetchID dials rank 0, retrying until it listens, and reads the id.
func fetchID(ctx context.Context, addr string) (nccl.UniqueID, error) {
	var id nccl.UniqueID
	for {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			defer conn.Close()
			if dl, ok := ctx.Deadline(); ok {
				conn.SetDeadline(dl)
			}
			b := make([]byte, nccl.UniqueIDSize)
			if _, err := io.ReadFull(conn, b); err != nil {
				return id, fmt.Errorf("reading the unique id: %w", err)
			}
			return id, id.UnmarshalBinary(b)
		}
		select {
		case <-ctx.Done():
			return id, fmt.Errorf("rank 0 at %s: %w", addr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func allReduce(ctx context.Context, rank, device, mib int, id nccl.UniqueID) error {
	d, err := cuda.GetDevice(device)
	if err != nil {
		return err
	}
	pctx, err := cuda.PrimaryContext(d)
	if err != nil {
		return err
	}
	defer pctx.Close()
	s, err := cuda.NewStream(pctx)
	if err != nil {
		return err
	}
	defer s.Close()
	start := time.Now()
	c, err := nccl.InitRank(ctx, s, id, 2, rank)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("rank %d: communicator on GPU %d in %v\n", rank, device, time.Since(start).Round(time.Millisecond))

	elems := mib << 20 / 4
	host := make([]float32, elems)
	for j := range host {
		host[j] = float32(rank+1) * float32(j%5)
	}
	x, err := cuda.AllocSliceFrom(pctx, host)
	if err != nil {
		return err
	}
	defer x.Close()
	start = time.Now()
	if err := nccl.AllReduce(c, x, x, nccl.Sum); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	took := time.Since(start)
	if err := x.CopyTo(host); err != nil {
		return err
	}
	for j, g := range host {
		if want := 3 * float32(j%5); g != want {
			return fmt.Errorf("element %d is %v, want %v", j, g, want)
		}
	}
	fmt.Printf("rank %d: all-reduce of %d MiB checked (first one, %v)\n", rank, mib, took.Round(time.Microsecond))
	return c.Shutdown(ctx)
}
