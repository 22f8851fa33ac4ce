//go:build linux && (amd64 || arm64)

package nvjitlink_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/nvjitlink"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// garbage is n bytes that are no format at all.
func garbage(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// archive builds an ar archive of the members, as ar rc does.
func archive(members ...[]byte) []byte {
	b := []byte("!<arch>\n")
	for i, m := range members {
		b = fmt.Appendf(b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", fmt.Sprintf("m%d.o/", i), 0, 0, 0, 0o644, len(m))
		b = append(b, m...)
		if len(m)%2 == 1 {
			b = append(b, '\n')
		}
	}
	return b
}

// fatbinHeader is a fatbin header that counts fat bytes of entries.
func fatbinHeader(fat uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xba55ed50)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 16)
	return binary.LittleEndian.AppendUint64(b, fat)
}

const ptxHeader = ".version 8.4\n.target sm_90\n.address_size 64\n"

// wantRefused links one input and wants ErrInvalidInput: each of these
// crashed the process inside nvJitLink 12.4, or linked only part of the
// input, when handed to it.
func wantRefused(t *testing.T, what string, kind nvjitlink.Kind, data []byte) {
	t.Helper()
	_, err := nvjitlink.Link("sm_90", []nvjitlink.Input{{Kind: kind, Name: "bad", Data: data}})
	if !errors.Is(err, nvjitlink.ErrInvalidInput) {
		t.Errorf("%s as %v: got %v, want an error matching ErrInvalidInput", what, kind, err)
	}
}

func TestLinkRefusesMalformedInputs(t *testing.T) {
	elfHeader := []byte("\x7fELF\x02\x01\x01") // 64-bit, little-endian, version 1
	for _, kind := range []nvjitlink.Kind{nvjitlink.CUBIN, nvjitlink.PTX, nvjitlink.FATBIN, nvjitlink.Object, nvjitlink.Library} {
		wantRefused(t, "garbage", kind, garbage(4096))
	}
	for _, kind := range []nvjitlink.Kind{nvjitlink.CUBIN, nvjitlink.Object} {
		wantRefused(t, "the ELF magic alone", kind, []byte("\x7fELF"))
		wantRefused(t, "an ELF ident and garbage", kind, concat(elfHeader, garbage(1000)))
	}
	wantRefused(t, "an archive magic and garbage", nvjitlink.Library, concat([]byte("!<arch>\n"), garbage(200)))
	wantRefused(t, "an archive of a garbage ELF member", nvjitlink.Library, archive(concat(elfHeader, garbage(200))))
	wantRefused(t, "a fatbin header counting more than there is", nvjitlink.FATBIN, concat(fatbinHeader(1<<20), garbage(100)))
	wantRefused(t, "PTX with a byte outside ASCII in code", nvjitlink.PTX, []byte(ptxHeader+".visible .entry k\u00e9() { ret; }\n"))
	wantRefused(t, "PTX with a byte outside ASCII in a /* */ comment", nvjitlink.PTX, []byte(ptxHeader+"/* caf\u00e9 */\n"))
	wantRefused(t, "PTX with a byte outside ASCII in a // comment", nvjitlink.PTX, []byte(ptxHeader+"// caf\u00e9\n"))
	wantRefused(t, "PTX with a NUL inside", nvjitlink.PTX, []byte(ptxHeader+"\x00garbage"))
	wantRefused(t, "an unknown kind", nvjitlink.Kind(10), []byte(ptxHeader))
}

// sm90 compiles src to a relocatable CUBIN and PTX for sm_90 with NVRTC.
func sm90(t *testing.T, src string) (cubin, ptx []byte) {
	t.Helper()
	needLibraries(t)
	res, err := nvrtc.Compile(src, nvrtc.WithArch("sm_90"), nvrtc.WithOptions("-rdc=true"))
	if err != nil {
		t.Fatal(err)
	}
	return res.CUBIN, res.PTX
}

func TestLinkRefusesDamagedCubins(t *testing.T) {
	cubin, _ := sm90(t, kernelSrc+helperSrc)
	wantRefused(t, "a truncated CUBIN", nvjitlink.CUBIN, cubin[:len(cubin)/2])
	wantRefused(t, "a truncated CUBIN", nvjitlink.Object, cubin[:len(cubin)/2])
	wantRefused(t, "an archive of a truncated CUBIN", nvjitlink.Library, archive(cubin[:len(cubin)/2]))

	// Section 1's offset (e_shoff + 64 + 24) past the end.
	shoff := binary.LittleEndian.Uint64(cubin[0x28:])
	far := bytes.Clone(cubin)
	binary.LittleEndian.PutUint64(far[shoff+64+24:], uint64(len(cubin))+100000)
	wantRefused(t, "a CUBIN with a section past its end", nvjitlink.CUBIN, far)

	// e_shstrndx past the section header table.
	badStr := bytes.Clone(cubin)
	binary.LittleEndian.PutUint16(badStr[0x3e:], 500)
	wantRefused(t, "a CUBIN with a bad e_shstrndx", nvjitlink.CUBIN, badStr)
}

func TestLinkAcceptsWellFormedInputs(t *testing.T) {
	kernel, _ := sm90(t, kernelSrc)
	helper, _ := sm90(t, helperSrc)
	_, ptx := sm90(t, kernelSrc+helperSrc)
	for name, inputs := range map[string][]nvjitlink.Input{
		"two CUBINs": {{Kind: nvjitlink.CUBIN, Name: "kernel", Data: kernel}, {Kind: nvjitlink.CUBIN, Name: "helper", Data: helper}},
		// nvJitLink takes members of device code from host objects only,
		// which NVRTC does not make: this archive passes the checks and
		// nvJitLink reads it, but the second CUBIN defines scale.
		"two CUBINs and an archive": {
			{Kind: nvjitlink.CUBIN, Name: "kernel", Data: kernel},
			{Kind: nvjitlink.Library, Name: "helpers.a", Data: archive(helper, []byte("odd"))},
			{Kind: nvjitlink.CUBIN, Name: "helper", Data: helper},
		},
		"PTX": {{Kind: nvjitlink.PTX, Name: "ptx", Data: ptx}},
		// C callers pass the NUL.
		"commented PTX with its NUL": {{Kind: nvjitlink.PTX, Name: "ptx", Data: concat([]byte("// cafe\n"), ptx, []byte{0})}},
	} {
		img, err := nvjitlink.Link("sm_90", inputs)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Contains(img.CUBIN, []byte("scaled")) {
			t.Errorf("%s: the linked image (%d bytes) lacks the kernel", name, len(img.CUBIN))
		}
	}
}

// TestLinkRefusesNULInOptionsAndNames: C strings end at a NUL, so the rest
// of an option or a name would be dropped without a word.
func TestLinkRefusesNULInOptionsAndNames(t *testing.T) {
	ptx := []nvjitlink.Input{{Kind: nvjitlink.PTX, Name: "k.ptx", Data: []byte(ptxHeader)}}
	if _, err := nvjitlink.Link("sm_90", ptx, "-O3\x00-bad-option"); !errors.Is(err, nvjitlink.ErrInvalidInput) || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Link with a NUL in an option = %v, want ErrInvalidInput naming the NUL", err)
	}
	named := []nvjitlink.Input{{Kind: nvjitlink.PTX, Name: "k\x00.ptx", Data: []byte(ptxHeader)}}
	if _, err := nvjitlink.Link("sm_90", named); !errors.Is(err, nvjitlink.ErrInvalidInput) || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Link with a NUL in an input's name = %v, want ErrInvalidInput naming the NUL", err)
	}
}
