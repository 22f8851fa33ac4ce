//go:build linux && (amd64 || arm64)

package nccl

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The rendezvous, over TCP: rank 0 listens at Config.Addr and each other
// rank connects.
//
//	rank 0 → peer: magic, nonce0 (32 bytes)
//	peer → rank 0: magic, nonce1 (32 bytes), rank, world size (uint32 each),
//	               HMAC-SHA256(token; "hello", nonce0, nonce1, rank, world size)
//	rank 0 → peer: frames: kind (1 byte), length (uint16), payload,
//	               HMAC-SHA256(token; "frame", nonce0, nonce1, kind, payload)
//
// Both nonces are fresh, so each side proves that it holds the token
// without sending it, and a frame cannot be replayed on another
// connection. A peer whose hello does not prove the token (or is not a
// hello at all) gets one unauthenticated frameRefused and is dropped;
// rank 0 goes on serving. The frames of an authenticated peer: frameWait
// once it is counted, then frameRelease with the UniqueID once every rank
// has come, or frameFail with the reason the job cannot start (a rank
// missing at the deadline, two processes of one rank, a world size that
// differs), which every peer connected gets.

var rdvMagic = [16]byte{'g', 'o', 'c', 'u', 'd', 'a', '-', 'n', 'c', 'c', 'l', '-', 'r', 'd', 'v', '1'}

const (
	nonceSize = 32
	macSize   = sha256.Size
	helloSize = len(rdvMagic) + nonceSize + 8 + macSize
	// handshakeTimeout bounds a connection's hello, so that a stranger
	// that sends nothing holds nothing up.
	handshakeTimeout = 10 * time.Second
)

const (
	frameWait byte = iota + 1
	frameRelease
	frameFail
	frameRefused
)

func mac(token string, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, []byte(token))
	for _, p := range parts {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

func u32(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// rendezvous returns the job's UniqueID: rank 0 makes it with newID and
// hands it to the others once all have come.
func (c *Config) rendezvous(ctx context.Context, newID func() (UniqueID, error)) (UniqueID, error) {
	if c.WorldSize == 1 {
		return newID()
	}
	if c.Rank == 0 {
		return c.serve(ctx, newID)
	}
	return c.join(ctx)
}

// peer is a rank that proved the token to rank 0.
type peer struct {
	rank, world    int
	conn           net.Conn
	nonce0, nonce1 []byte
}

func (p *peer) send(token string, kind byte, payload []byte) error {
	b := []byte{kind, 0, 0}
	binary.BigEndian.PutUint16(b[1:], uint16(len(payload)))
	b = append(b, payload...)
	b = append(b, mac(token, []byte("frame"), p.nonce0, p.nonce1, []byte{kind}, payload)...)
	_, err := p.conn.Write(b)
	return err
}

// listen opens rank 0's socket at Addr: on host's address where it is
// this machine's, else on every interface, with the port of Addr.
func (c *Config) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil && (errors.Is(err, syscall.EADDRNOTAVAIL) || isNoSuchHost(err)) {
		_, port, _ := net.SplitHostPort(c.Addr)
		ln, err = net.Listen("tcp", ":"+port)
	}
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("nccl: rank 0: %s is taken (under torchrun MASTER_PORT is its store's: set %s to a free port, the same for every rank): %w", c.Addr, PortEnv, err)
		}
		return nil, fmt.Errorf("nccl: rank 0: listening at %s: %w", c.Addr, err)
	}
	return ln, nil
}

func isNoSuchHost(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}

// serve is rank 0's part.
func (c *Config) serve(ctx context.Context, newID func() (UniqueID, error)) (UniqueID, error) {
	var zero UniqueID
	ln, err := c.listen()
	if err != nil {
		return zero, err
	}
	id, err := newID()
	if err != nil {
		ln.Close()
		return zero, err
	}
	// The connections in their handshake, closed when serve ends.
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	done := make(chan struct{})
	arrived := make(chan *peer)
	var wg sync.WaitGroup
	defer func() {
		close(done)
		ln.Close()
		mu.Lock()
		for conn := range open {
			conn.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			select {
			case <-done:
				mu.Unlock()
				conn.Close()
				return
			default:
			}
			open[conn] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := c.greet(ctx, conn)
				mu.Lock()
				delete(open, conn)
				mu.Unlock()
				if err != nil {
					select {
					case <-done: // closed by serve's end, not dropped
					default:
						if c.Logf != nil {
							c.Logf("nccl: rank 0: dropped %s: %v", conn.RemoteAddr(), err)
						}
					}
					conn.Close()
					return
				}
				select {
				case arrived <- p:
				case <-done:
					conn.Close()
				}
			}()
		}
	}()

	peers := make([]*peer, c.WorldSize)
	count := 0
	defer func() {
		for _, p := range peers {
			if p != nil {
				p.conn.Close()
			}
		}
	}()
	// fail tells every peer, the offending one too, why the job cannot
	// start, and returns it as rank 0's error.
	fail := func(extra *peer, format string, args ...any) (UniqueID, error) {
		msg := fmt.Sprintf(format, args...)
		for _, p := range append(slices.Clone(peers), extra) {
			if p != nil {
				p.conn.SetWriteDeadline(time.Now().Add(time.Second))
				_ = p.send(c.Token, frameFail, []byte(msg))
			}
		}
		return zero, errors.New("nccl: rank 0: " + msg)
	}
	for count < c.WorldSize-1 {
		select {
		case p := <-arrived:
			from := p.conn.RemoteAddr()
			switch {
			case p.world != c.WorldSize:
				return fail(p, "rank %d (from %s) says the world has %d ranks, rank 0 says %d: every rank needs the same WORLD_SIZE", p.rank, from, p.world, c.WorldSize)
			case p.rank == 0:
				return fail(p, "a second rank 0 came from %s: each rank needs a rank of its own", from)
			case p.rank < 0 || p.rank >= c.WorldSize:
				return fail(p, "rank %d (from %s) is out of range for %d ranks", p.rank, from, c.WorldSize)
			case peers[p.rank] != nil:
				return fail(p, "rank %d came twice, from %s and from %s: each rank needs a rank of its own", p.rank, peers[p.rank].conn.RemoteAddr(), from)
			}
			p.conn.SetWriteDeadline(time.Now().Add(handshakeTimeout))
			if err := p.send(c.Token, frameWait, nil); err != nil {
				// It left already: it may come again.
				p.conn.Close()
				continue
			}
			peers[p.rank] = p
			count++
		case <-ctx.Done():
			var missing []string
			for r := 1; r < c.WorldSize; r++ {
				if peers[r] == nil {
					missing = append(missing, fmt.Sprint(r))
				}
			}
			_, err := fail(nil, "rank(s) %s of %d never reached rank 0 at %s", strings.Join(missing, ", "), c.WorldSize, c.Addr)
			return zero, fmt.Errorf("%w: %w", err, ctx.Err())
		}
	}
	var failed []string
	for _, p := range peers {
		if p == nil {
			continue
		}
		p.conn.SetWriteDeadline(time.Now().Add(handshakeTimeout))
		if err := p.send(c.Token, frameRelease, id[:]); err != nil {
			failed = append(failed, fmt.Sprintf("rank %d: %v", p.rank, err))
		}
	}
	if failed != nil {
		return zero, fmt.Errorf("nccl: rank 0: the id did not reach every rank (%s)", strings.Join(failed, "; "))
	}
	return id, nil
}

// greet reads a connection's hello and checks its proof of the token.
func (c *Config) greet(ctx context.Context, conn net.Conn) (*peer, error) {
	deadline := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	p := &peer{conn: conn, nonce0: make([]byte, nonceSize)}
	rand.Read(p.nonce0)
	if _, err := conn.Write(append(rdvMagic[:], p.nonce0...)); err != nil {
		return nil, err
	}
	b := make([]byte, helloSize)
	if _, err := io.ReadFull(conn, b); err != nil {
		return nil, fmt.Errorf("no hello: %w", err)
	}
	if !bytes.Equal(b[:len(rdvMagic)], rdvMagic[:]) {
		return nil, errors.New("not a rank of a job of package nccl (bad magic)")
	}
	b = b[len(rdvMagic):]
	p.nonce1 = b[:nonceSize]
	rw := b[nonceSize : nonceSize+8]
	p.rank = int(binary.BigEndian.Uint32(rw[:4]))
	p.world = int(binary.BigEndian.Uint32(rw[4:]))
	want := mac(c.Token, []byte("hello"), p.nonce0, p.nonce1, rw[:4], rw[4:])
	if !hmac.Equal(b[nonceSize+8:], want) {
		_, _ = conn.Write([]byte{frameRefused, 0, 0})
		return nil, fmt.Errorf("it does not hold the job's token (%s)", TokenEnv)
	}
	conn.SetDeadline(time.Time{})
	return p, nil
}

// join is the part of a rank other than 0: connect to rank 0 (again and
// again while nothing listens there), prove the token, and wait for the id.
func (c *Config) join(ctx context.Context) (UniqueID, error) {
	var zero UniqueID
	who := fmt.Sprintf("nccl: rank %d of %d", c.Rank, c.WorldSize)
	var conn net.Conn
	var last error
	wait := 20 * time.Millisecond
	for conn == nil {
		var d net.Dialer
		var err error
		conn, err = d.DialContext(ctx, "tcp", c.Addr)
		if err == nil {
			break
		}
		if ctx.Err() == nil {
			last = err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, fmt.Errorf("%s: rank 0 never answered at %s (%v): %w", who, c.Addr, last, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	waiting := false
	fail := func(err error) (UniqueID, error) {
		if ctx.Err() != nil {
			if waiting {
				return zero, fmt.Errorf("%s: reached rank 0 at %s and waited for the other ranks until the end: %w", who, c.Addr, ctx.Err())
			}
			return zero, fmt.Errorf("%s: rank 0 at %s did not finish the handshake: %w", who, c.Addr, ctx.Err())
		}
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			if waiting {
				return zero, fmt.Errorf("%s: rank 0 at %s closed the connection while this rank waited for the others (rank 0 failed or exited)", who, c.Addr)
			}
			return zero, fmt.Errorf("%s: %s closed the connection during the handshake (not rank 0 of this job?)", who, c.Addr)
		}
		return zero, fmt.Errorf("%s: rank 0 at %s: %w", who, c.Addr, err)
	}
	hello := make([]byte, len(rdvMagic)+nonceSize)
	if _, err := io.ReadFull(conn, hello); err != nil {
		return fail(err)
	}
	if !bytes.Equal(hello[:len(rdvMagic)], rdvMagic[:]) {
		return zero, fmt.Errorf("%s: what answers at %s is not rank 0's rendezvous (another service on that port?)", who, c.Addr)
	}
	nonce0 := hello[len(rdvMagic):]
	nonce1 := make([]byte, nonceSize)
	rand.Read(nonce1)
	rank, world := u32(c.Rank), u32(c.WorldSize)
	msg := append(append(append(append(rdvMagic[:], nonce1...), rank...), world...),
		mac(c.Token, []byte("hello"), nonce0, nonce1, rank, world)...)
	if _, err := conn.Write(msg); err != nil {
		return fail(err)
	}
	for {
		head := make([]byte, 3)
		if _, err := io.ReadFull(conn, head); err != nil {
			return fail(err)
		}
		kind := head[0]
		if kind == frameRefused {
			return zero, fmt.Errorf("%s: rank 0 at %s refused this rank's job token: every rank needs the same %s", who, c.Addr, TokenEnv)
		}
		body := make([]byte, int(binary.BigEndian.Uint16(head[1:]))+macSize)
		if _, err := io.ReadFull(conn, body); err != nil {
			return fail(err)
		}
		payload := body[:len(body)-macSize]
		if !hmac.Equal(body[len(payload):], mac(c.Token, []byte("frame"), nonce0, nonce1, []byte{kind}, payload)) {
			return zero, fmt.Errorf("%s: %s does not prove the job's token (%s differs?)", who, c.Addr, TokenEnv)
		}
		switch kind {
		case frameWait:
			waiting = true
		case frameRelease:
			var id UniqueID
			if err := id.UnmarshalBinary(payload); err != nil {
				return zero, fmt.Errorf("%s: from rank 0: %w", who, err)
			}
			return id, nil
		case frameFail:
			return zero, fmt.Errorf("%s: rank 0 at %s: %s", who, c.Addr, payload)
		default:
			return zero, fmt.Errorf("%s: rank 0 at %s sent frame %d", who, c.Addr, kind)
		}
	}
}
