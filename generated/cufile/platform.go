//go:build !(linux && (amd64 || arm64))

package cufile

// The generated layouts and calling conventions are those of LP64 Linux on
// amd64 and arm64, the two the generator checks against gcc; anywhere else
// the build stops here, with this name in the error, rather than give
// wrong layouts.
var _ = gocuda_builds_only_for_linux_on_amd64_or_arm64
