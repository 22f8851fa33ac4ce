//go:build linux && (amd64 || arm64) && cuda11080

package main

import "github.com/gocuda/gocuda/generated/cufile"

// cufileVersion says only whether cuFile loads: CUDA 11.8's cufile.h has
// no cuFileGetVersion.
func cufileVersion() (string, error) {
	if err := cufile.Load(); err != nil {
		return "", err
	}
	return "unknown (11.8's cufile.h has no cuFileGetVersion)", nil
}
