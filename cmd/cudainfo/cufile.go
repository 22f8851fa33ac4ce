//go:build linux && (amd64 || arm64) && !cuda11080

package main

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cufile"
)

// cufileVersion reads cuFileGetVersion's number, 1000 times the major
// version plus 10 times the minor (1090 for 1.9).
func cufileVersion() (string, error) {
	var v int32
	if err := cufile.GetVersion(&v); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d (%d)", v/1000, v%1000/10, v), nil
}
