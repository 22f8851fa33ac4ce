package ptx

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
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

// Conversions to floating point honour their rounding modifier: from
// integers, and from wider floats to f32, f16 and bf16, subnormals and
// overflow included.
func TestConvertDirectedRounding(t *testing.T) {
	got := runOne(t, ".reg .f32 %f<8>;\n.reg .b16 %h<8>;\n", `
	cvt.rz.f32.s32 %f1, 16777217;          // 2^24 + 1
	mov.b32 %r1, %f1; cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1], %rd10;
	cvt.rp.f32.s32 %f1, 16777217;
	mov.b32 %r1, %f1; cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1+8], %rd10;
	cvt.rm.f32.s64 %f1, -16777217;
	mov.b32 %r1, %f1; cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1+16], %rd10;
	cvt.rz.f32.s32 %f1, -16777219;
	mov.b32 %r1, %f1; cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1+24], %rd10;
	mov.b32 %f2, 0f3F800001;               // 1 + 2^-23
	cvt.rp.f16.f32 %h1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+32], %rd10;
	cvt.rz.bf16.f32 %h1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+40], %rd10;
	mov.b32 %f2, 0f33000001;               // just above 2^-25, half of the smallest f16
	cvt.rn.f16.f32 %h1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+48], %rd10;
	mov.b32 %f2, 0f33000000;               // 2^-25 exactly: a tie, to 0
	cvt.rn.f16.f32 %h1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+56], %rd10;
	mov.b32 %f2, 0f47800000;               // 65536 overflows f16
	cvt.rz.f16.f32 %h1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+64], %rd10;
	cvt.rm.f16.s32 %h1, -70000;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+72], %rd10;
	mov.b32 %f2, 0f00000001;               // the smallest f32 subnormal
	cvt.rp.f16.f32 %h1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+80], %rd10;`, 11)
	expect(t, got, 0x4b800000, 0x4b800001, 0xcb800001, 0xcb800001, 0x3c01, 0x3f80, 1, 0, 0x7bff, 0xfc00, 1)
}

const mallocPTX = `.version 8.4
.target sm_90
.address_size 64
.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);
.extern .func free(.param .b64 free_param_0);
.visible .entry k(.param .u64 out, .param .u32 twice)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [twice];
	mov.u32 %r2, %tid.x;
	{
	.param .b64 param0;
	st.param.b64 [param0], 40;
	.param .b64 retval0;
	call.uni (retval0), malloc, (param0);
	ld.param.b64 %rd2, [retval0];
	}
	cvt.u64.u32 %rd3, %r2;
	st.u64 [%rd2+32], %rd3;
	ld.u64 %rd4, [%rd2+32];
	shl.b64 %rd5, %rd3, 3;
	add.s64 %rd5, %rd1, %rd5;
	st.global.u64 [%rd5], %rd4;
	and.b64 %rd6, %rd2, 15;
	st.global.u64 [%rd5+256], %rd6;
	{
	.param .b64 param0;
	st.param.b64 [param0], %rd2;
	call.uni free, (param0);
	}
	setp.eq.s32 %p1, %r1, 0;
	@%p1 ret;
	{
	.param .b64 param0;
	st.param.b64 [param0], %rd2;
	call.uni free, (param0);
	}
	ret;
}
`

// Device-side malloc hands each thread its own aligned block, free takes
// it back, and freeing it twice is a fault.
func TestDeviceMallocAndFree(t *testing.T) {
	k := mustKernel(t, mallocPTX, "k")
	var mem hostMem
	defer mem.free()
	buf := mem.alloc(512)
	for _, twice := range []uint32{0, 1} {
		var p params
		p.u64(addrOf(buf)).u32(twice)
		err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{32, 1, 1}, Params: p, Memory: &mem})
		if twice == 1 {
			var f *Fault
			if !errors.As(err, &f) || !strings.Contains(f.Msg, "free") {
				t.Fatalf("double free: err = %v, want a fault naming free", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range 32 {
			if v, a := binary.LittleEndian.Uint64(buf[8*i:]), binary.LittleEndian.Uint64(buf[256+8*i:]); v != uint64(i) || a != 0 {
				t.Errorf("thread %d: read back %d, alignment %d", i, v, a)
			}
		}
	}
}

const indirectPTX = `.version 8.4
.target sm_90
.address_size 64
.func (.param .b32 func_retval0) inc(.param .b32 x);
.func (.param .b32 func_retval0) dbl(.param .b32 x);
.global .align 8 .u64 table[2] = {inc, dbl};
.func (.param .b32 func_retval0) inc(.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [x];
	add.s32 %r2, %r1, 1;
	st.param.b32 [func_retval0], %r2;
	ret;
}
.func (.param .b32 func_retval0) dbl(.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [x];
	shl.b32 %r2, %r1, 1;
	st.param.b32 [func_retval0], %r2;
	ret;
}
.visible .entry k(.param .u64 out, .param .u64 bad)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	and.b32 %r2, %r1, 1;
	mul.wide.u32 %rd2, %r2, 8;
	mov.u64 %rd3, table;
	add.s64 %rd3, %rd3, %rd2;
	ld.global.u64 %rd4, [%rd3];
	ld.param.u64 %rd5, [bad];
	add.s64 %rd4, %rd4, %rd5;
	{
	.param .b32 param0;
	st.param.b32 [param0], %r1;
	.param .b32 retval0;
	prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
	call (retval0), %rd4, (param0), prototype_0;
	ld.param.b32 %r3, [retval0];
	}
	mov.u64 %rd6, dbl;
	{
	.param .b32 param0;
	st.param.b32 [param0], %r3;
	.param .b32 retval0;
	prototype_1 : .callprototype (.param .b32 _) _ (.param .b32 _);
	call (retval0), %rd6, (param0), prototype_1;
	ld.param.b32 %r4, [retval0];
	}
	mul.wide.u32 %rd7, %r1, 4;
	add.s64 %rd7, %rd1, %rd7;
	st.global.u32 [%rd7], %r4;
	ret;
}
`

// Calls through function pointers, from a table initialized with
// functions' addresses and from mov of a function's name, reach the
// function each lane names; a pointer to no function is a fault.
func TestIndirectCalls(t *testing.T) {
	k := mustKernel(t, indirectPTX, "k")
	var mem hostMem
	defer mem.free()
	buf := mem.alloc(4 * 32)
	var p params
	p.u64(addrOf(buf)).u64(0)
	if err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{32, 1, 1}, Params: p, Memory: &mem}); err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		want := uint32(2 * (i + 1))
		if i%2 == 1 {
			want = uint32(4 * i)
		}
		if got := binary.LittleEndian.Uint32(buf[4*i:]); got != want {
			t.Errorf("lane %d: %d, want %d", i, got, want)
		}
	}
	p = nil
	p.u64(addrOf(buf)).u64(8)
	err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{32, 1, 1}, Params: p, Memory: &mem})
	var f *Fault
	if !errors.As(err, &f) || f.Result != ResultIllegalAddress || !strings.Contains(f.Msg, "not the address of a function") {
		t.Fatalf("call through a bad pointer: err = %v", err)
	}
}

// elect.sync, the SIMD video instructions, 16-bit integer pairs and the
// FP8 conversions.
func TestElectSIMDPairsFP8(t *testing.T) {
	got := runOne(t, ".reg .b16 %h<4>;\n.reg .f32 %f<4>;\n", `
	elect.sync %r1|%p1, 0xffffffff;
	selp.u32 %r2, 1, 0, %p1;
	cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1], %rd10;
	cvt.u64.u32 %rd10, %r2; st.global.u64 [%rd1+8], %rd10;
	vabsdiff4.u32.u32.u32 %r3, 0x10ff0580, 0x2001ff80, 0;
	cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd1+16], %rd10;
	vadd2.s32.s32.s32.sat %r3, 0x7fff0001, 0x00017fff, 0;
	cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd1+24], %rd10;
	vabsdiff4.u32.u32.u32.add %r3, 0x10ff0580, 0x2001ff80, 5;
	cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd1+32], %rd10;
	min.s16x2 %r3, 0xffff0005, 0x0001fff0;
	cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd1+40], %rd10;
	add.u16x2 %r3, 0xffff0005, 0x00020001;
	cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd1+48], %rd10;
	mov.f32 %f1, 0f43E00000;                 // 448
	mov.f32 %f2, 0fC4FA0000;                 // -2000: saturates
	cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+56], %rd10;
	cvt.rn.f16x2.e4m3x2 %r3, %h1;
	cvt.u64.u32 %rd10, %r3; st.global.u64 [%rd1+64], %rd10;
	mov.f32 %f1, 0f3FC00000;                 // 1.5
	mov.f32 %f2, 0f3A800000;                 // 2^-10
	cvt.rn.satfinite.e5m2x2.f32 %h1, %f1, %f2;
	cvt.u64.u16 %rd10, %h1; st.global.u64 [%rd1+72], %rd10;`, 10)
	expect(t, got, 0, 1, 0x10fefa00, 0x7fff7fff, 0x10+0xfe+0xfa+0x00+5, 0xfffffff0, 0x00010006, 0x7efe, 0x5f00df00, 0x3e14)
}

// sm_90's vector atomics add element by element, atom returning the old
// values and red none; max.relu and min.relu clamp a negative result at 0.
func TestVectorAtomicsAndIntegerRelu(t *testing.T) {
	got := runOne(t, ".reg .f32 %f<12>;\n", `
	mov.f32 %f1, 0f3FC00000;                 // 1.5
	mov.f32 %f2, 0fC0000000;                 // -2
	st.global.v2.f32 [%rd1], {%f1, %f2};
	atom.global.add.v2.f32 {%f3, %f4}, [%rd1], {%f2, %f1};
	mov.f32 %f5, 0f3F000000;                 // 0.5
	red.global.add.v4.f32 [%rd1+16], {%f5, %f1, %f2, %f5};
	red.global.add.v4.f32 [%rd1+16], {%f5, %f5, %f5, %f5};
	mov.b32 %r1, %f3; cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1+8], %rd10;
	mov.b32 %r1, %f4; cvt.u64.u32 %rd10, %r1; st.global.u64 [%rd1+32], %rd10;
	max.relu.s32 %r2, -7, -3;
	cvt.u64.u32 %rd10, %r2; st.global.u64 [%rd1+40], %rd10;
	min.relu.s32 %r2, 9, 4;
	cvt.u64.u32 %rd10, %r2; st.global.u64 [%rd1+48], %rd10;
	max.relu.s32 %r2, -7, 0x7fffffff;
	cvt.u64.u32 %rd10, %r2; st.global.u64 [%rd1+56], %rd10;`, 8)
	f := func(lo, hi float32) uint64 { return uint64(math.Float32bits(lo)) | uint64(math.Float32bits(hi))<<32 }
	expect(t, got, f(-0.5, -0.5), uint64(math.Float32bits(1.5)), f(1, 2), f(-1.5, 1), uint64(math.Float32bits(-2)), 0, 4, 0x7fffffff)
}

// A vector atomic's address is aligned to the whole vector.
func TestVectorAtomicMisaligned(t *testing.T) {
	text := ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n" +
		".reg .f32 %f<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.f32 %f1, 0f3F800000;\n" +
		"red.global.add.v4.f32 [%rd1+8], {%f1, %f1, %f1, %f1};\nret;\n}\n"
	k := mustKernel(t, text, "k")
	var mem hostMem
	defer mem.free()
	buf := mem.alloc(64)
	var p params
	p.u64(addrOf(buf))
	err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}, Params: p, Memory: &mem})
	var f *Fault
	if !errors.As(err, &f) || !strings.Contains(err.Error(), "misaligned") {
		t.Fatalf("Run = %v, want a misaligned-address fault", err)
	}
}

// cuda_fp16.h's inline assembly declares registers as ".reg.b32 f, C;"
// with no space after .reg, and writes hex literals as 0X1F79U.
func TestRegDirectiveWithoutSpace(t *testing.T) {
	got := runOne(t, "", `
	{.reg.b32         f, C;
	.reg.b16 spc;
	mov.b32 f, 0X1F79U;
	mov.b32 C, 0x80000000U;
	or.b32 f, f, C;
	mov.b16 spc, 0x9400U;
	cvt.u64.u32 %rd10, f; st.global.u64 [%rd1], %rd10;
	cvt.u64.u16 %rd10, spc; st.global.u64 [%rd1+8], %rd10;
	}`, 2)
	expect(t, got, 0x80001f79, 0x9400)
}

// Lanes of one warp spinning on a lock another lane holds get on: the
// spinning lanes yield to the holder, as a GPU's independent thread
// scheduling lets it run, and a barrier after the lock waits for all.
func TestSpinLockWithinAWarp(t *testing.T) {
	text := ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n" +
		".reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\n" +
		"$L_spin:\natom.global.cas.b32 %r1, [%rd1], 0, 1;\nsetp.ne.s32 %p1, %r1, 0;\n@%p1 bra $L_spin;\n" +
		"ld.volatile.global.u32 %r2, [%rd1+4];\nadd.s32 %r2, %r2, 1;\nst.volatile.global.u32 [%rd1+4], %r2;\n" +
		"atom.global.exch.b32 %r3, [%rd1], 0;\nbar.sync 0;\nld.volatile.global.u32 %r2, [%rd1+4];\n" +
		"mov.u32 %r4, %tid.x;\nmul.wide.u32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3+8], %r2;\nret;\n}\n"
	k := mustKernel(t, text, "k")
	var mem hostMem
	defer mem.free()
	n := 64
	buf := mem.alloc(8 + 4*n)
	var p params
	p.u64(addrOf(buf))
	if err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{uint32(n), 1, 1}, Params: p, Memory: &mem, MaxSteps: 1 << 24}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got := binary.LittleEndian.Uint32(buf[8+4*i:]); got != uint32(n) {
			t.Fatalf("thread %d saw %d critical sections after the barrier, want %d", i, got, n)
		}
	}
}

// A warp waiting on a flag that a later warp of its block sets, in a
// kernel with no barrier (whose warps otherwise run one after the other),
// gets it: the warps not yet started start beside the spinning one.
func TestWarpWaitsForALaterWarp(t *testing.T) {
	text := ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n" +
		".reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\n" +
		"mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra $L_wait;\n" +
		"st.volatile.global.u32 [%rd1], 7;\nret;\n" +
		"$L_wait:\nld.volatile.global.u32 %r2, [%rd1];\nsetp.eq.s32 %p2, %r2, 0;\n@%p2 bra $L_wait;\n" +
		"st.global.u32 [%rd1+4], %r2;\nret;\n}\n"
	k := mustKernel(t, text, "k")
	var mem hostMem
	defer mem.free()
	buf := mem.alloc(8)
	var p params
	p.u64(addrOf(buf))
	if err := k.Run(&Launch{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{96, 1, 1}, Params: p, Memory: &mem, MaxSteps: 1 << 24}); err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(buf[4:]); got != 7 {
		t.Fatalf("the waiting warp read %d, want 7", got)
	}
}
