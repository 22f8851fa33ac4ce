//go:build linux && (amd64 || arm64)

package nccl

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/gocuda/gocuda/cuda"
)

// AutoDevice, as Config.Device, picks the GPU from the local rank: the
// local rank modulo the devices this process sees (CUDA_VISIBLE_DEVICES
// applied).
const AutoDevice = -1

// The variables of package nccl's own that a launched job reads.
const (
	// TokenEnv holds the job's token: every rank must have the same.
	TokenEnv = "GOCUDA_NCCL_TOKEN"
	// PortEnv is the port of rank 0's rendezvous, when MASTER_PORT is not
	// free for it (under torchrun, see the package comment).
	PortEnv = "GOCUDA_NCCL_PORT"
)

// Config is this process's place in a job and how its ranks meet: what
// Environment reads from a launcher's variables, or a program sets itself.
type Config struct {
	// Rank is this process's rank, of WorldSize.
	Rank, WorldSize int
	// LocalRank is the rank among this machine's ranks, and
	// LocalWorldSize their number (0: unknown).
	LocalRank, LocalWorldSize int
	// Addr is rank 0's rendezvous, host:port: rank 0 listens there (on
	// every interface where host is not one of its own) and the other
	// ranks connect to it.
	Addr string
	// Token authenticates the ranks to each other ("": none); it never
	// crosses the network.
	Token string
	// Device is the GPU's ordinal, or AutoDevice.
	Device int
	// Source names where the values came from ("torchrun", "Open MPI",
	// "Slurm", "RANK and WORLD_SIZE"; "" for a Config of the program's).
	Source string
	// Logf, when not nil, is told of connections rank 0 drops.
	Logf func(format string, args ...any)
}

// Option changes a Config that FromEnvironment read.
type Option func(*Config)

// WithToken sets the job's token, in place of GOCUDA_NCCL_TOKEN's.
func WithToken(token string) Option { return func(c *Config) { c.Token = token } }

// WithDevice sets the GPU's ordinal, in place of the local rank's pick.
func WithDevice(ordinal int) Option { return func(c *Config) { c.Device = ordinal } }

// WithAddr sets rank 0's rendezvous address, host:port.
func WithAddr(addr string) Option { return func(c *Config) { c.Addr = addr } }

// WithLogf sets Config.Logf.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *Config) { c.Logf = logf }
}

// FromEnvironment makes this process's rank of the job its launcher
// started (torchrun, mpirun, srun, or plain variables; see the package
// comment): Environment, the options, then Config.Init.
func FromEnvironment(ctx context.Context, opts ...Option) (*Comm, error) {
	cfg, err := Environment()
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg.Init(ctx)
}

// Environment reads this process's Config from the launcher's variables;
// see the package comment for which, and which family wins when several
// are set.
func Environment() (Config, error) { return configFrom(os.LookupEnv) }

// family is one launcher's variables.
type family struct {
	name                     string
	rank, size, local, lsize string
}

// families, in the order in which they win: a job of mpirun inside a Slurm
// allocation sees the allocation's SLURM_PROCID (the same for every
// process) beside its own OMPI_COMM_WORLD_RANK, and torchrun's or a
// user's RANK is the most deliberate of all.
var families = []family{
	{"RANK and WORLD_SIZE", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
	{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
	{"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", ""},
}

func configFrom(lookup func(string) (string, bool)) (Config, error) {
	cfg := Config{Device: AutoDevice}
	var f *family
	for i := range families {
		_, r := lookup(families[i].rank)
		_, s := lookup(families[i].size)
		if r || s {
			f = &families[i]
			break
		}
	}
	if f == nil {
		return cfg, fmt.Errorf("nccl: no launcher's variables: set RANK and WORLD_SIZE (and MASTER_ADDR, MASTER_PORT), or start the job with torchrun, mpirun or srun")
	}
	cfg.Source = f.name
	if f.name == families[0].name {
		if v, _ := lookup("TORCHELASTIC_RUN_ID"); v != "" {
			cfg.Source = "torchrun"
		}
	}
	num := func(name string, need bool) (int, bool, error) {
		v, ok := lookup(name)
		if !ok || name == "" {
			if need {
				return 0, false, fmt.Errorf("nccl: %s is set but %s is not (%s)", f.rank+" or "+f.size, name, cfg.Source)
			}
			return 0, false, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("nccl: %s=%q is not a number of 0 or more (%s)", name, v, cfg.Source)
		}
		return n, true, nil
	}
	var err error
	if cfg.Rank, _, err = num(f.rank, true); err != nil {
		return cfg, err
	}
	if cfg.WorldSize, _, err = num(f.size, true); err != nil {
		return cfg, err
	}
	local, hasLocal, err := num(f.local, false)
	if err != nil {
		return cfg, err
	}
	if cfg.LocalWorldSize, _, err = num(f.lsize, false); err != nil {
		return cfg, err
	}
	cfg.LocalRank = cfg.Rank // one machine, unless the launcher says
	if hasLocal {
		cfg.LocalRank = local
	}
	host, hasHost := lookup("MASTER_ADDR")
	port, hasPort := lookup("MASTER_PORT")
	over, hasOver := lookup(PortEnv)
	if hasOver {
		port, hasPort = over, true
	} else if v, _ := lookup("TORCHELASTIC_USE_AGENT_STORE"); v == "True" && hasPort {
		// torchrun's agent serves its store on MASTER_PORT: the next
		// port is rank 0's.
		p, err := strconv.Atoi(port)
		if err != nil {
			return cfg, fmt.Errorf("nccl: MASTER_PORT=%q is not a port (%s)", port, cfg.Source)
		}
		port = strconv.Itoa(p + 1)
	}
	if !hasHost || !hasPort || host == "" || port == "" {
		return cfg, fmt.Errorf("nccl: %s gives the rank but not rank 0's address: set MASTER_ADDR (rank 0's host) and MASTER_PORT (a free port there) for every rank", cfg.Source)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return cfg, fmt.Errorf("nccl: port %q (MASTER_PORT or %s) is not a port, 1 to 65535", port, PortEnv)
	}
	cfg.Addr = net.JoinHostPort(host, port)
	cfg.Token, _ = lookup(TokenEnv)
	return cfg, cfg.check()
}

// check refuses a Config that cannot be a rank of a job.
func (c *Config) check() error {
	src := ""
	if c.Source != "" {
		src = " (" + c.Source + ")"
	}
	if c.WorldSize < 1 || c.WorldSize > 1<<30 {
		return fmt.Errorf("nccl: a world of %d ranks%s", c.WorldSize, src)
	}
	if c.Rank < 0 || c.Rank >= c.WorldSize {
		return fmt.Errorf("nccl: rank %d is out of range: the world has %d ranks, 0 to %d%s", c.Rank, c.WorldSize, c.WorldSize-1, src)
	}
	if c.LocalRank < 0 || (c.LocalWorldSize > 0 && c.LocalRank >= c.LocalWorldSize) {
		return fmt.Errorf("nccl: local rank %d of %d local ranks%s", c.LocalRank, c.LocalWorldSize, src)
	}
	if c.WorldSize > 1 {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("nccl: rank 0's address %q: %v%s", c.Addr, err, src)
		}
	}
	return nil
}

// Init makes this process's rank of the job: it picks the GPU, meets the
// other ranks at rank 0's rendezvous (Addr), where rank 0 hands them a new
// UniqueID once all have come, and makes the communicator with it
// (InitRank), on a new stream of the device's primary context. ctx bounds
// all of it; every failure, on any rank, is an error on every rank.
func (c Config) Init(ctx context.Context) (*Comm, error) {
	const op = "Init"
	if err := c.check(); err != nil {
		return nil, err
	}
	dev := c.Device
	if dev == AutoDevice {
		n, err := cuda.DeviceCount()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("nccl: %s: rank %d: no visible CUDA device", op, c.Rank)
		}
		if c.LocalWorldSize > n {
			return nil, fmt.Errorf("nccl: %s: rank %d: %d ranks on this machine but %d visible devices: NCCL needs a GPU per rank", op, c.Rank, c.LocalWorldSize, n)
		}
		dev = c.LocalRank % n
	}
	s, err := cuda.OpenStream(dev)
	if err != nil {
		return nil, fmt.Errorf("nccl: %s: rank %d: device %d: %w", op, c.Rank, dev, err)
	}
	defer s.Close()
	id, err := c.rendezvous(ctx, NewUniqueID)
	if err != nil {
		return nil, err
	}
	comm, err := InitRank(ctx, s, id, c.WorldSize, c.Rank)
	if err != nil {
		return nil, fmt.Errorf("nccl: %s: rank %d of %d: %w", op, c.Rank, c.WorldSize, err)
	}
	return comm, nil
}
