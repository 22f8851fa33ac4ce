//go:build linux && (amd64 || arm64)

package cu

// Regenerate every version of the matrix whose header can be fetched or is
// cached (the same as `make generate` at the module root).
//go:generate go run ../../headers/fetch -manifest ../../headers/versions.json
//go:generate go run ../../gen -all
