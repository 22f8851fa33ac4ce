//go:build linux && (amd64 || arm64)

package gds

import "syscall"

// Registrable reports whether cuFile registers files in dir: whether its
// filesystem is not one that cuFile refuses.
func Registrable(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	_, refused := unregistrable[int64(st.Type)]
	return !refused
}
