//go:build tools

// Package tools pins the generator's dependencies in go.mod.
package tools

import (
	_ "github.com/dave/jennifer/jen"
	_ "modernc.org/cc/v4"
)
