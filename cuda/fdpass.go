package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
)

// Passing handles between processes over a Unix socket: a message is a
// header (magic, kind, number of files, length of the data), the data,
// and the files' descriptors as SCM_RIGHTS ancillary data of the header.

const (
	fdMagic        = "gC"
	fdKindHandle   = 1
	fdKindRelease  = 2
	fdHeaderSize   = 8
	maxPassedFiles = 16
	maxPassedData  = 1 << 20
)

// SendHandle sends data (an IPCMemHandle's bytes, say) and the descriptors
// of files (of PhysicalMemory.ExportFD or MemPool.ExportFD) as one message
// on conn, for ReceiveHandle at the other end. The files stay the caller's
// to close: the receiver gets descriptors of its own.
func SendHandle(conn *net.UnixConn, data []byte, files ...*os.File) error {
	const op = "SendHandle"
	if conn == nil {
		return &Error{Op: op, Err: errors.New("no connection")}
	}
	if len(files) > maxPassedFiles || len(data) > maxPassedData {
		return &Error{Op: op, Err: fmt.Errorf("%d files and %d bytes: at most %d files and %d bytes", len(files), len(data), maxPassedFiles, maxPassedData)}
	}
	fds := make([]int, len(files))
	for i, f := range files {
		if f == nil {
			return &Error{Op: op, Err: fmt.Errorf("file %d is nil", i)}
		}
		fds[i] = int(f.Fd())
	}
	msg := make([]byte, fdHeaderSize+len(data))
	copy(msg, fdMagic)
	msg[2], msg[3] = fdKindHandle, byte(len(files))
	binary.LittleEndian.PutUint32(msg[4:], uint32(len(data)))
	copy(msg[fdHeaderSize:], data)
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	err := writeMsg(conn, msg, oob)
	for _, f := range files {
		// f.Fd's descriptor had to stay open until the message was sent.
		runtime.KeepAlive(f)
	}
	if err != nil {
		return &Error{Op: op, Err: err}
	}
	return nil
}

// writeMsg writes msg with oob attached to its first byte, then the rest.
func writeMsg(conn *net.UnixConn, msg, oob []byte) error {
	n, _, err := conn.WriteMsgUnix(msg, oob, nil)
	if err != nil {
		return err
	}
	if n < len(msg) {
		_, err = conn.Write(msg[n:])
	}
	return err
}

// ReceiveHandle reads one message of SendHandle from conn: its data and
// the files it carried, which are the caller's to close (once imported:
// ImportPhysicalMemory and ImportMemPool take descriptors of their own).
func ReceiveHandle(conn *net.UnixConn) (data []byte, files []*os.File, err error) {
	const op = "ReceiveHandle"
	if conn == nil {
		return nil, nil, &Error{Op: op, Err: errors.New("no connection")}
	}
	kind, data, files, err := readMsg(conn)
	if err != nil {
		return nil, nil, &Error{Op: op, Err: err}
	}
	if kind != fdKindHandle {
		closeFiles(files)
		return nil, nil, &Error{Op: op, Err: fmt.Errorf("message of kind %d, not a handle", kind)}
	}
	return data, files, nil
}

// ReleaseHandle tells the exporter at the other end of conn that this
// process has closed what it imported from it, for its WaitReleased.
func ReleaseHandle(conn *net.UnixConn) error {
	const op = "ReleaseHandle"
	if conn == nil {
		return &Error{Op: op, Err: errors.New("no connection")}
	}
	msg := make([]byte, fdHeaderSize)
	copy(msg, fdMagic)
	msg[2] = fdKindRelease
	if err := writeMsg(conn, msg, nil); err != nil {
		return &Error{Op: op, Err: err}
	}
	return nil
}

// WaitReleased waits until the importer at the other end of conn has
// called ReleaseHandle, or has closed the connection, which its exit does
// and which also ends its imports (the driver closes a process's imports
// when it exits). After it the exporter may free what it exported to that
// importer.
func WaitReleased(conn *net.UnixConn) error {
	const op = "WaitReleased"
	if conn == nil {
		return &Error{Op: op, Err: errors.New("no connection")}
	}
	kind, _, files, err := readMsg(conn)
	closeFiles(files)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return &Error{Op: op, Err: err}
	case kind != fdKindRelease:
		return &Error{Op: op, Err: fmt.Errorf("message of kind %d, not a release", kind)}
	}
	return nil
}

// readMsg reads a message: the header with any descriptors, then the data.
func readMsg(conn *net.UnixConn) (kind byte, data []byte, files []*os.File, err error) {
	var hdr [fdHeaderSize]byte
	oob := make([]byte, syscall.CmsgSpace(maxPassedFiles*4))
	n, oobn, flags, _, err := conn.ReadMsgUnix(hdr[:], oob)
	if oobn > 0 {
		files, err = rightsFiles(oob[:oobn], err)
	}
	if err != nil {
		closeFiles(files)
		if n == 0 && errors.Is(err, io.EOF) {
			return 0, nil, nil, io.EOF
		}
		return 0, nil, nil, err
	}
	if n == 0 {
		return 0, nil, nil, io.EOF
	}
	if flags&syscall.MSG_CTRUNC != 0 {
		closeFiles(files)
		return 0, nil, nil, errors.New("more descriptors than a message carries: some were dropped")
	}
	if n < fdHeaderSize {
		if _, err := io.ReadFull(conn, hdr[n:]); err != nil {
			closeFiles(files)
			return 0, nil, nil, fmt.Errorf("short message header: %w", err)
		}
	}
	size := binary.LittleEndian.Uint32(hdr[4:])
	if string(hdr[:2]) != fdMagic || size > maxPassedData || int(hdr[3]) != len(files) {
		closeFiles(files)
		return 0, nil, nil, fmt.Errorf("not a message of SendHandle (header %x, %d descriptors)", hdr, len(files))
	}
	data = make([]byte, size)
	if _, err := io.ReadFull(conn, data); err != nil {
		closeFiles(files)
		return 0, nil, nil, fmt.Errorf("message data: %w", err)
	}
	return hdr[2], data, files, nil
}

// rightsFiles turns the descriptors of SCM_RIGHTS messages into files;
// err is the read's error, returned unless parsing fails.
func rightsFiles(oob []byte, err error) ([]*os.File, error) {
	msgs, perr := syscall.ParseSocketControlMessage(oob)
	if perr != nil {
		return nil, perr
	}
	var files []*os.File
	for _, m := range msgs {
		fds, ferr := syscall.ParseUnixRights(&m)
		if ferr != nil {
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "cuda-passed-handle"))
		}
	}
	return files, err
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
