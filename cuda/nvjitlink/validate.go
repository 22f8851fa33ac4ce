//go:build linux && (amd64 || arm64)

package nvjitlink

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidInput is matched (errors.Is) by the error of an input that
// Link refuses before nvJitLink sees it.
var ErrInvalidInput = errors.New("invalid input")

// checkInput returns why in must not reach nvJitLink, nil when the
// cheap checks find nothing wrong. nvJitLink trusts the structure of its
// input: a malformed ELF, archive or PTX text crashes the process inside
// the library rather than failing.
func checkInput(in Input) error {
	var err error
	switch in.Kind {
	case CUBIN, Object:
		err = checkELF(in.Data)
	case FATBIN:
		err = checkFatbin(in.Data)
	case Library:
		err = checkArchive(in.Data)
	case PTX:
		err = checkPTX(in.Data)
	case LTOIR:
		// nvJitLink checks the magic of LTO-IR itself and fails cleanly.
	default:
		err = errors.New("not a kind Link takes")
	}
	if err != nil {
		return fmt.Errorf("nvjitlink: Link: input %q (%v): %w: %v", in.Name, in.Kind, ErrInvalidInput, err)
	}
	return nil
}

// checkELF checks that b is a little-endian 64-bit ELF file whose section
// header table, sections, program header table and segments lie within
// b, and whose section name table is one of its sections. debug/elf is no
// help: it refuses a CUBIN, whose e_version is not 1.
func checkELF(b []byte) error {
	if len(b) < 64 || !bytes.HasPrefix(b, []byte(elf.ELFMAG)) {
		return errors.New("not an ELF file (no 64-byte header with magic \\x7fELF)")
	}
	if class, data := b[elf.EI_CLASS], b[elf.EI_DATA]; elf.Class(class) != elf.ELFCLASS64 || elf.Data(data) != elf.ELFDATA2LSB {
		return fmt.Errorf("ELF class %d, data encoding %d: want 2 (64-bit) and 1 (little-endian)", class, data)
	}
	le := binary.LittleEndian
	n := uint64(len(b))
	// within reports whether count entries of size bytes from off lie in b.
	within := func(off, count, size uint64) bool {
		return off <= n && (size == 0 || count <= (n-off)/size)
	}
	phoff, phentsize, phnum := le.Uint64(b[0x20:]), uint64(le.Uint16(b[0x36:])), uint64(le.Uint16(b[0x38:]))
	shoff, shentsize, shnum := le.Uint64(b[0x28:]), uint64(le.Uint16(b[0x3a:])), uint64(le.Uint16(b[0x3c:]))
	shstrndx := uint64(le.Uint16(b[0x3e:]))
	if phnum > 0 && (phentsize < 56 || !within(phoff, phnum, phentsize)) {
		return errors.New("the ELF program header table lies outside the data")
	}
	for i := range phnum {
		ph := b[phoff+i*phentsize:]
		if !within(le.Uint64(ph[0x08:]), 1, le.Uint64(ph[0x20:])) {
			return fmt.Errorf("ELF segment %d lies outside the data", i)
		}
	}
	if shoff == 0 {
		return nil
	}
	if shentsize < 64 || !within(shoff, 1, shentsize) {
		return errors.New("the ELF section header table lies outside the data")
	}
	// Section 0 holds the counts that do not fit the header's fields.
	if shnum == 0 {
		shnum = le.Uint64(b[shoff+0x20:])
	}
	if shstrndx == uint64(elf.SHN_XINDEX) {
		shstrndx = uint64(le.Uint32(b[shoff+0x28:]))
	}
	if !within(shoff, shnum, shentsize) {
		return errors.New("the ELF section header table lies outside the data")
	}
	if shstrndx != uint64(elf.SHN_UNDEF) && shstrndx >= shnum {
		return fmt.Errorf("the ELF section name table index %d is not one of the %d sections", shstrndx, shnum)
	}
	for i := range shnum {
		sh := b[shoff+i*shentsize:]
		if elf.SectionType(le.Uint32(sh[0x04:])) != elf.SHT_NOBITS && !within(le.Uint64(sh[0x18:]), 1, le.Uint64(sh[0x20:])) {
			return fmt.Errorf("ELF section %d lies outside the data", i)
		}
	}
	return nil
}

// checkFatbin checks the header of a fat binary: its magic, and that the
// header and the entries it counts lie within b.
func checkFatbin(b []byte) error {
	const magic, hdrLen = 0xba55ed50, 16
	if len(b) < hdrLen || binary.LittleEndian.Uint32(b) != magic {
		return errors.New("no fatbin header (magic 0xba55ed50)")
	}
	hdr := uint64(binary.LittleEndian.Uint16(b[6:]))
	fat := binary.LittleEndian.Uint64(b[8:])
	if n := uint64(len(b)); hdr < hdrLen || hdr > n || fat > n-hdr {
		return fmt.Errorf("the fatbin header (%d bytes) and entries (%d bytes) overrun the %d bytes of data", hdr, fat, n)
	}
	return nil
}

// checkArchive checks that b is an ar archive whose member headers are
// well formed and whose members lie within b; a member that is an ELF
// file is checked as one.
func checkArchive(b []byte) error {
	const magic, hdrLen = "!<arch>\n", 60
	if !bytes.HasPrefix(b, []byte(magic)) {
		return errors.New(`not an ar archive (magic "!<arch>\n")`)
	}
	for off := len(magic); off < len(b); {
		if len(b)-off < hdrLen || string(b[off+58:off+hdrLen]) != "`\n" {
			return fmt.Errorf("a malformed archive member header at offset %d", off)
		}
		name := strings.TrimRight(string(b[off:off+16]), " ")
		size, err := strconv.ParseUint(strings.TrimRight(string(b[off+48:off+58]), " "), 10, 63)
		if err != nil || size > uint64(len(b)-off-hdrLen) {
			return fmt.Errorf("archive member %q at offset %d: its size overruns the data", name, off)
		}
		data := b[off+hdrLen : off+hdrLen+int(size)]
		if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
			if err := checkELF(data); err != nil {
				return fmt.Errorf("archive member %q: %v", name, err)
			}
		}
		off += hdrLen + int(size) + int(size&1) // members start at even offsets
	}
	return nil
}

// checkPTX checks that PTX text holds no NUL but trailing ones (nvJitLink
// would read only the text before it) and only ASCII: nvJitLink 12.4
// crashes on other bytes in code, strings and /* */ comments, and 13.0
// refuses them everywhere, // comments included.
func checkPTX(b []byte) error {
	b = bytes.TrimRight(b, "\x00")
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return fmt.Errorf("a NUL byte at offset %d of the PTX text", i)
	}
	for i, c := range b {
		if c >= 0x80 {
			return fmt.Errorf("a byte outside ASCII (%#x) at offset %d of the PTX text", c, i)
		}
	}
	return nil
}
