package ptx

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const errHead = ".version 8.0\n.target sm_90a\n.address_size 64\n"

// Parse tells malformed text from valid PTX it does not read: the fake
// driver refuses the first at load, as the driver does, and loads the
// second, failing only its launches.
func TestParseErrorsSayWhetherTheTextIsMalformed(t *testing.T) {
	for _, c := range []struct {
		name, body  string
		unsupported bool
	}{
		{"missing operand", ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tadd.u32 %r1, ;\n\tret;\n}\n", false},
		{"stray token", "foo;\n", false},
		{"no closing brace", ".visible .entry k()\n{\n\tret;\n", false},
		{"unknown type", ".global .q32 g;\n", false},
		{"texture reference", ".global .texref t;\n", true},
		{"debug section with no closing brace", ".section .debug_str { .b8 0 \n", false},
		{"32-bit addresses", "", true},
	} {
		src := errHead + c.body
		if c.name == "32-bit addresses" {
			src = ".version 8.0\n.target sm_90\n.address_size 32\n"
		}
		_, err := Parse(src)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: Parse = %v, want an *Error", c.name, err)
			continue
		}
		if pe.Unsupported != c.unsupported || pe.Line == 0 {
			t.Errorf("%s: Parse = %v, Unsupported %v, line %d; want Unsupported %v and a line", c.name, err, pe.Unsupported, pe.Line, c.unsupported)
		}
	}
}

// The debug information -G adds, DWARF in .section blocks at module
// scope, is skipped, and so are .loc directives to the end of their line
// (those of inlined code name the function and where it was inlined,
// with no terminator before the next instruction): the module's kernels
// run.
func TestDebugSectionsAreSkipped(t *testing.T) {
	src := errHead + ".visible .entry k(.param .u64 out)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n" +
		"$L__func_begin0:\n\t.loc 1 2 0\n\tld.param.u64 %rd1, [out];\n" +
		"\t.loc 2 4653 1, function_name $L__info_string0, inlined_at 1 11 3\n\tld.global.u32 %r1, [%rd1];\n" +
		"\t.loc 2 17 5, function_name $L__info_string1+4, inlined_at 2 4653 1\n\tst.global.u32 [%rd1+4], %r1;\n\tmov.u32 %r1, 7;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n$L__func_end0:\n}\n" +
		"\t.file 1 \"/tmp/program.cu\"\n\t.section .debug_loc\n\t{\n.b64 $L__func_begin0\n.b64 $L__func_end0\n.b8 5\n.b8 0\n\t}\n" +
		"\t.section .debug_info\n\t{\n.b32 .debug_abbrev\n.b32 .debug_loc+228\n.b8 112,114,111,103\n.b8 0\n\t}\n\t.section .debug_macinfo { }\n"
	m, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if _, err := m.Kernel("k"); err != nil {
		t.Fatalf("Kernel: %v", err)
	}
}

// A vector operand as wide as wgmma's accumulators parses: the error is
// the compiler's, naming the instruction and its line, and the module's
// other entry compiles. A failed entry fails the same way when asked again.
func TestWideVectorOperandIsTheCompilersError(t *testing.T) {
	var regs []string
	for i := range 64 {
		regs = append(regs, fmt.Sprintf("%%f%d", i))
	}
	inst := "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" + strings.Join(regs, ", ") + "}, %rd1, %rd1, p, 1, 1, 0, 0"
	src := errHead + ".visible .entry fine()\n{\n\tret;\n}\n" +
		".visible .entry tensor(.param .u64 d)\n{\n\t.reg .f32 %f<64>;\n\t.reg .b64 %rd<2>;\n\t.reg .pred p;\n\tld.param.u64 %rd1, [d];\n\t" +
		inst + ";\n\tret;\n}\n"
	m, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if _, err := m.Kernel("fine"); err != nil {
		t.Errorf("Kernel(fine) = %v", err)
	}
	line := strings.Count(src[:strings.Index(src, "wgmma")], "\n") + 1
	for try := range 2 {
		_, err := m.Kernel("tensor")
		var pe *Error
		if !errors.As(err, &pe) || pe.Line != line || !strings.HasPrefix(pe.Inst, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {") || !strings.Contains(pe.Msg, "warpgroup mma") {
			t.Errorf("try %d: Kernel(tensor) = %v (line %d, inst %.40q), want the wgmma at line %d", try, err, pe.Line, pe.Inst, line)
		}
	}
}
