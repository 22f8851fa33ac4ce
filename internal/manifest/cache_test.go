package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func sumOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestVerifyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pkg.deb")
	os.WriteFile(p, []byte("package"), 0o644)
	if err := VerifyFile(p, sumOf("package")); err != nil {
		t.Errorf("VerifyFile with the right sum: %v", err)
	}
	err := VerifyFile(p, sumOf("other"))
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Got != sumOf("package") || ce.What != p {
		t.Errorf("VerifyFile with a wrong sum: %v, want a ChecksumError for %s", err, p)
	}
}

func TestWriteHeader(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCUDA_HEADER_CACHE", cache)
	v := Version{Version: "12.4", SHA256: sumOf("header")}

	var ce *ChecksumError
	if _, err := v.WriteHeader([]byte("wrong")); !errors.As(err, &ce) {
		t.Fatalf("WriteHeader of wrong data: %v, want a ChecksumError", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Fatalf("cache holds %d entries after a refused write", len(entries))
	}

	path, err := v.WriteHeader([]byte("header"))
	if err != nil {
		t.Fatal(err)
	}
	data, got, err := v.ReadHeader()
	if err != nil || got != path || string(data) != "header" {
		t.Errorf("ReadHeader = %q, %s, %v; want %q, %s", data, got, err, "header", path)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("cache dir holds %d entries, want only cuda.h (no temp files)", len(entries))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}
