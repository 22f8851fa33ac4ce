package main

import (
	"reflect"
	"testing"
)

func TestDirectives(t *testing.T) {
	src := "#include <stdint.h>\n" +
		"  # /* comment */ define A \"#include <x.h>\" /* spans\nlines */ 1\n" +
		"int x; // #include \"no.h\"\n" +
		"/* #include \"no.h\"\n#include \"no.h\" */\n" +
		"%:include <stdlib.h>\n" +
		"#inc\\\nlude \"a\\\nb.h\"\n" +
		"char c = '\"'; #include not at the start of a line\n" +
		"#if 0\nit's unterminated\n#include <cuda.h>\n#endif\n" +
		"#\n"
	got := directives([]byte(src))
	want := []directive{
		{1, "include", " <stdint.h>"},
		{2, "define", " A \"#include <x.h>\"   1"},
		{7, "include", " <stdlib.h>"},
		{8, "include", " \"ab.h\""},
		{12, "if", " 0"},
		{14, "include", " <cuda.h>"},
		{15, "endif", ""},
		{16, "", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("directives:\n%q\nwant:\n%q", got, want)
	}
}

func TestCheckDirectives(t *testing.T) {
	for src, ok := range map[string]bool{
		"#include <stdlib.h>\n#include <stdint.h>\n":   true,
		"#include  < stdint.h >\n":                     false,
		"#include \"stdint.h\"\n":                      false,
		"#define H <stdint.h>\n#include H\n":           false,
		"#line 12\n":                                   true,
		"#line 12 \"other.h\"\n":                       false,
		"#import <stdint.h>\n":                         false,
		"#pragma once\n#ifndef X\n#define X\n#endif\n": true,
	} {
		if err := checkDirectives("cuda.h", []byte(src)); (err == nil) != ok {
			t.Errorf("%q: error %v", src, err)
		}
	}
}
