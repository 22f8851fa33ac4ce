package manifest

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseFileSource(t *testing.T) {
	sha := strings.Repeat("a", 64)
	doc := func(path string) []byte {
		return []byte(fmt.Sprintf(`{"default": "12.8", "versions": [{"version": "12.8", "tag": "cuda12080",
			"source": {"kind": "file", "path": %q}, "sha256": %q}]}`, path, sha))
	}
	m, err := Parse(doc("/opt/x/include/cuda.h"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Versions[0].Source; s.Kind != SourceFile || s.Path != "/opt/x/include/cuda.h" {
		t.Errorf("source = %+v", s)
	}
	for _, bad := range []string{"", "include/cuda.h"} {
		if _, err := Parse(doc(bad), "test"); err == nil || !strings.Contains(err.Error(), "absolute path") {
			t.Errorf("path %q: %v, want an error asking for an absolute path", bad, err)
		}
	}
}

// TestRepositoryManifest keeps the committed manifest valid.
func TestRepositoryManifest(t *testing.T) {
	m, err := Load("../../headers/versions.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Versions) < 2 {
		t.Errorf("%d versions", len(m.Versions))
	}
}
