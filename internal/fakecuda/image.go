package fakecuda

import "encoding/binary"

// MinimalCubin returns the smallest image the library loads as a cubin,
// for tests: an ELF64 header for the CUDA machine (EM_CUDA), a null
// section and the string table of the section names. It holds no code;
// the kernels registered with RegisterKernel resolve in it, as in any
// binary image.
func MinimalCubin() []byte {
	const (
		ehsize   = 64
		shentsz  = 64
		names    = "\x00.shstrtab\x00"
		namesOff = ehsize
		shoff    = 80 // the names, padded to 8 bytes
	)
	b := make([]byte, shoff+2*shentsz)
	le := binary.LittleEndian
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = 2, 1, 1 // ELFCLASS64, little-endian, EV_CURRENT
	b[7], b[8] = 0x33, 7       // the OS ABI and ABI version nvcc's cubins carry
	le.PutUint16(b[16:], 2)    // ET_EXEC
	le.PutUint16(b[18:], 190)  // EM_CUDA
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[40:], shoff)
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], 56) // program header size, with none
	le.PutUint16(b[58:], shentsz)
	le.PutUint16(b[60:], 2) // sections
	le.PutUint16(b[62:], 1) // the names' section
	copy(b[namesOff:], names)
	sh := b[shoff+shentsz:] // section 1; section 0 stays null
	le.PutUint32(sh[0:], 1) // its name: ".shstrtab"
	le.PutUint32(sh[4:], 3) // SHT_STRTAB
	le.PutUint64(sh[24:], namesOff)
	le.PutUint64(sh[32:], uint64(len(names)))
	le.PutUint64(sh[48:], 1) // alignment
	return b
}
