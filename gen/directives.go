package main

import (
	"fmt"
	"strings"
)

// standardHeaders are the headers of the C library, which are all a cuda.h
// may include. cuda.h is self-contained apart from them (it includes
// <stdlib.h> and <stdint.h>); anything else it could include is either not
// part of the binding or, like the header itself, a way to recurse without
// end: the C front end does not bound include depth.
var standardHeaders = map[string]bool{
	"assert.h": true, "complex.h": true, "ctype.h": true, "errno.h": true, "fenv.h": true,
	"float.h": true, "inttypes.h": true, "iso646.h": true, "limits.h": true, "locale.h": true,
	"math.h": true, "setjmp.h": true, "signal.h": true, "stdalign.h": true, "stdarg.h": true,
	"stdbool.h": true, "stddef.h": true, "stdint.h": true, "stdio.h": true, "stdlib.h": true,
	"stdnoreturn.h": true, "string.h": true, "tgmath.h": true, "time.h": true, "uchar.h": true,
	"wchar.h": true, "wctype.h": true,
}

// checkDirectives refuses a header whose directives would bring in other
// text than its own and the C library's: an #include of anything but a
// standard header named literally (a computed #include, a quoted one, the
// header itself), #include_next and #import, and #line with a file name,
// which would attribute the declarations that follow to another file. It
// reads every directive, also those that #if would skip: refusing one that
// is inactive is safe, and no cuda.h has one.
func checkDirectives(name string, src []byte) error {
	return walkDirectives(name, src, func(arg string, line int) error {
		if h, ok := strings.CutPrefix(arg, "<"); ok {
			if h, ok = strings.CutSuffix(h, ">"); ok && standardHeaders[h] {
				return nil
			}
		}
		return fmt.Errorf("%s:%d: #include %s: a header may include only the standard C headers, by name (<stdlib.h>, <stdint.h>, …)", name, line, arg)
	})
}

// walkDirectives refuses #include_next, #import and #line with a file
// name in src, and asks include about the argument of each #include.
func walkDirectives(name string, src []byte, include func(arg string, line int) error) error {
	for _, d := range directives(src) {
		switch d.name {
		case "include":
			if err := include(strings.TrimSpace(d.rest), d.line); err != nil {
				return err
			}
		case "include_next", "import":
			return fmt.Errorf("%s:%d: #%s is not supported in a header", name, d.line, d.name)
		case "line":
			if strings.Contains(d.rest, `"`) {
				return fmt.Errorf("%s:%d: #line with a file name is not supported in a header", name, d.line)
			}
		}
	}
	return nil
}

// directive is one preprocessing directive: its name and the rest of its
// logical line, with comments replaced by a space.
type directive struct {
	line int // where it starts, from 1
	name string
	rest string
}

// directives finds every directive of a C source: translation phases 1 to 3
// as far as they matter here (line splices, comments, string and character
// literals, which may hold what looks like a comment or a #).
func directives(src []byte) []directive {
	// Phase 2: splice lines, remembering where each spliced line starts.
	text := make([]byte, 0, len(src))
	starts := []int{1} // original line of each line of text
	line := 1
	for i := 0; i < len(src); i++ {
		if src[i] == '\\' {
			if j := i + 1; j < len(src) && src[j] == '\n' {
				i, line = j, line+1
				continue
			}
			if j := i + 2; j < len(src) && src[i+1] == '\r' && src[j] == '\n' {
				i, line = j, line+1
				continue
			}
		}
		text = append(text, src[i])
		if src[i] == '\n' {
			line++
			starts = append(starts, line)
		}
	}

	var out []directive
	var cur strings.Builder // the logical line so far, comments replaced
	k := 0                  // line of text being read
	first := 0              // line of text the current logical line started on
	flush := func() {
		s := strings.TrimLeft(cur.String(), " \t\f\v\r")
		cur.Reset()
		var ok bool
		if s, ok = strings.CutPrefix(s, "#"); !ok {
			if s, ok = strings.CutPrefix(s, "%:"); !ok {
				return
			}
		}
		s = strings.TrimLeft(s, " \t\f\v\r")
		n := 0
		for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
			n++
		}
		out = append(out, directive{line: starts[first], name: s[:n], rest: s[n:]})
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			flush()
			k++
			first = k
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
			}
			cur.WriteByte(' ')
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			// A comment spanning lines joins them into one logical line.
			i += 2
			for i < len(text) && !(text[i] == '*' && i+1 < len(text) && text[i+1] == '/') {
				if text[i] == '\n' {
					k++
				}
				i++
			}
			i++
			cur.WriteByte(' ')
		case c == '"' || c == '\'':
			// A literal ends at its quote or, unterminated, at the end of
			// the line (as in a group that #if skips).
			cur.WriteByte(c)
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
				cur.WriteByte(text[i])
				if text[i] == '\\' && i+1 < len(text) && text[i+1] != '\n' {
					i++
					cur.WriteByte(text[i])
				} else if text[i] == c {
					break
				}
			}
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}
