package ptx

import (
	"encoding/binary"
	"testing"
)

// runOne runs body as one thread of an entry whose parameter %rd1 holds
// the address of an output buffer of n 64-bit words, and returns them.
func runOne(t *testing.T, regs, body string, n int) []uint64 {
	t.Helper()
	text := ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n" +
		".reg .pred %p<8>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n" + regs +
		"ld.param.u64 %rd1, [out];\n" + body + "\nret;\n}\n"
	k := mustKernel(t, text, "k")
	var mem hostMem
	defer mem.free()
	buf := mem.alloc(8 * n)
	var p params
	p.u64(addrOf(buf))
	if err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}, Params: p, Memory: &mem}); err != nil {
		t.Fatal(err)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(buf[8*i:])
	}
	return out
}

func expect(t *testing.T, got []uint64, want ...uint64) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d = %#x, want %#x", i, got[i], want[i])
		}
	}
}

// The carry flag after a subtraction is the adder's carry out, set when
// nothing is borrowed, as the hardware computes a + ^b + carry.
func TestSubtractCarryIsNotBorrow(t *testing.T) {
	got := runOne(t, "", `
	sub.cc.u32 %r1, 5, 3;      // no borrow: carry 1
	addc.u32 %r2, 0, 0;
	sub.cc.u32 %r3, 3, 5;      // borrow: carry 0
	addc.u32 %r4, 0, 0;
	add.cc.u32 %r5, 0, 0;      // carry 0
	subc.u32 %r6, 0, 0;        // 0 + ^0 + 0 = -1
	sub.cc.u64 %rd2, 0, 1;     // two-word 0 - 1
	subc.u64 %rd3, 0, 0;
	sub.cc.u32 %r7, 7, 7;
	subc.cc.u32 %r8, 9, 4;     // 9 - 4 with no borrow in
	subc.u32 %r9, 0, 0;        // no borrow out: 0
	cvt.u64.u32 %rd10, %r2; st.global.u64 [%rd1], %rd10;
	cvt.u64.u32 %rd10, %r4; st.global.u64 [%rd1+8], %rd10;
	cvt.u64.u32 %rd10, %r6; st.global.u64 [%rd1+16], %rd10;
	st.global.u64 [%rd1+24], %rd2;
	st.global.u64 [%rd1+32], %rd3;
	cvt.u64.u32 %rd10, %r8; st.global.u64 [%rd1+40], %rd10;
	cvt.u64.u32 %rd10, %r9; st.global.u64 [%rd1+48], %rd10;`, 7)
	expect(t, got, 1, 0, 0xffffffff, ^uint64(0), ^uint64(0), 5, 0)
}

func TestFindNthSet(t *testing.T) {
	got := runOne(t, "", `
	fns.b32 %r1, 0xaaaaaaaa, 3, 1;
	fns.b32 %r2, 0xaaaaaaaa, 3, -1;
	fns.b32 %r3, 0xaaaaaaaa, 2, 1;
	fns.b32 %r4, 0xaaaaaaaa, 2, -1;
	fns.b32 %r5, 0xaaaaaaaa, 2, 0;
	fns.b32 %r6, 0xaaaaaaaa, 1, 3;
	fns.b32 %r7, 0xaaaaaaaa, 30, 2;
	cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1], %rd10;
	cvt.u64.u32 %rd10, %r2; st.global.u64 [%rd1+8], %rd10;
	cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd1+16], %rd10;
	cvt.u64.u32 %rd10, %r4; st.global.u64 [%rd1+24], %rd10;
	cvt.u64.u32 %rd10, %r5; st.global.u64 [%rd1+32], %rd10;
	cvt.u64.u32 %rd10, %r6; st.global.u64 [%rd1+40], %rd10;
	cvt.u64.u32 %rd10, %r7; st.global.u64 [%rd1+48], %rd10;`, 7)
	expect(t, got, 3, 3, 3, 1, 0xffffffff, 5, 0xffffffff)
}
