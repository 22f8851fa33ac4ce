package ptx

import (
	"fmt"
	"strings"
)

// token is one lexeme of PTX text. Identifiers keep their dots
// (ld.global.f32, %tid.x): the parser splits an instruction's name into
// its opcode and modifiers.
type token struct {
	kind byte // 'i' identifier, 'n' number, 's' string, or the punctuation itself
	text string
	line int
}

func (t token) String() string {
	if t.kind == 0 {
		return "end of text"
	}
	return fmt.Sprintf("%q", t.text)
}

func identStart(c byte) bool {
	return c == '_' || c == '$' || c == '%' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func identChar(c byte) bool { return identStart(c) || (c >= '0' && c <= '9') }

// lex splits src into tokens, dropping comments. A PTX module is at most
// maxText bytes, so a hostile text costs bounded work.
func lex(src string) ([]token, error) {
	if len(src) > maxText {
		return nil, &Error{Msg: fmt.Sprintf("a text of %d bytes, over the %d this package reads", len(src), maxText), Unsupported: true}
	}
	var toks []token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == 0:
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, &Error{Line: line, Msg: "unterminated comment"}
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) || src[j] != '"' {
				return nil, &Error{Line: line, Msg: "unterminated string"}
			}
			toks = append(toks, token{'s', src[i+1 : j], line})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (identChar(src[j]) || ((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !strings.HasPrefix(src[i:], "0x") && !strings.HasPrefix(src[i:], "0X"))) {
				j++
			}
			toks = append(toks, token{'n', src[i:j], line})
			i = j
		case identStart(c) || c == '@':
			j := i + 1
			for j < len(src) && (identChar(src[j]) || (src[j] == ':' && j+2 < len(src) && src[j+1] == ':' && identChar(src[j+2]))) {
				if src[j] == ':' {
					j++
				}
				j++
			}
			word := src[i:j]
			// ".reg.b32 f;" (in the inline assembly of cuda_fp16.h) is
			// ".reg .b32 f;": directives and modifiers never hold a dot
			for c == '.' && len(word) > 1 {
				k := strings.IndexByte(word[1:], '.')
				if k < 0 {
					break
				}
				toks = append(toks, token{'i', word[:k+1], line})
				word = word[k+1:]
			}
			toks = append(toks, token{'i', word, line})
			i = j
		case strings.IndexByte("{}[](),;:+-!=<>|", c) >= 0:
			toks = append(toks, token{c, src[i : i+1], line})
			i++
		default:
			return nil, &Error{Line: line, Msg: fmt.Sprintf("unexpected character %q", c)}
		}
		if len(toks) > maxTokens {
			return nil, &Error{Line: line, Msg: fmt.Sprintf("more than %d tokens", maxTokens), Unsupported: true}
		}
	}
	return toks, nil
}
