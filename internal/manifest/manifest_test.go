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

func TestParseLibraryHeadersAndLibraries(t *testing.T) {
	sha := strings.Repeat("a", 64)
	doc := func(extra string) []byte {
		return []byte(fmt.Sprintf(`{"default": "12.4", "versions": [{"version": "12.4", "tag": "cuda12040",
			"source": {"kind": "debian", "package": "p", "package_version": "1", "suite": "trixie", "component": "non-free",
			"package_sha256": %q, "path": "usr/include/cuda.h"}, "sha256": %q%s}]}`, sha, sha, extra))
	}
	hdr := func(name string) string {
		return fmt.Sprintf(`{"name": %q, "path": "usr/include/%s", "sha256": %q}`, name, name, sha)
	}
	lib := fmt.Sprintf(`{"name": "libnvrtc.so.12", "arch": "amd64", "package": "libnvrtc12", "package_version": "1",
		"package_sha256": %q, "path": "usr/lib/x86_64-linux-gnu/libnvrtc.so.12.4.127", "sha256": %q}`, sha, sha)
	own := fmt.Sprintf(`{"name": "cufile.h", "path": "usr/include/cufile.h", "sha256": %q, "package": "libcufile-dev", "package_version": "1.9", "package_sha256": %q}`, sha, sha)
	m, err := Parse(doc(`, "headers": [`+hdr("nvrtc.h")+`, `+hdr("crt/host_defines.h")+`, `+hdr("cuda_fp16.hpp")+`, `+own+`], "libraries": [`+lib+`]`), "test")
	if err != nil {
		t.Fatal(err)
	}
	v := m.Versions[0]
	if h, ok := v.Header("nvrtc.h"); !ok || h.Path != "usr/include/nvrtc.h" {
		t.Errorf("Header(nvrtc.h) = %+v, %v", h, ok)
	}
	if h, ok := v.Header("cufile.h"); !ok || h.Package != "libcufile-dev" || h.PackageVersion != "1.9" {
		t.Errorf("Header(cufile.h) = %+v, %v; want libcufile-dev's", h, ok)
	}
	if len(v.Libraries) != 1 || v.Libraries[0].Arch != "amd64" {
		t.Errorf("libraries = %+v", v.Libraries)
	}
	for _, bad := range []string{
		`, "headers": [` + hdr("../evil.h") + `]`,
		`, "headers": [` + hdr("crt/../../evil.h") + `]`,
		`, "headers": [` + hdr("/etc/evil.h") + `]`,
		`, "headers": [` + hdr("lib/evil.h") + `]`,
		`, "headers": [` + hdr("crt//evil.h") + `]`,
		`, "headers": [` + hdr("evil.so") + `]`,
		`, "headers": [` + hdr("cuda.h") + `]`,
		`, "headers": [` + hdr("nvrtc.h") + `, ` + hdr("nvrtc.h") + `]`,
		`, "headers": [{"name": "nvrtc.h", "path": "x", "sha256": "00"}]`,
		`, "headers": [` + strings.Replace(own, `, "package_version": "1.9"`, ``, 1) + `]`,
		`, "headers": [` + strings.Replace(own, `"package": "libcufile-dev", `, ``, 1) + `]`,
		`, "headers": [` + strings.Replace(own, `"package_sha256": "`+sha+`"`, `"package_sha256": "00"`, 1) + `]`,
		`, "libraries": [{"name": "libnvrtc.so.12"}]`,
		`, "libraries": [` + strings.Replace(lib, `"libnvrtc.so.12"`, `"lib/../x"`, 1) + `]`,
	} {
		if _, err := Parse(doc(bad), "test"); err == nil {
			t.Errorf("Parse accepted %s", bad)
		}
	}
}

// TestNCCLVersions: NCCL's entries are a matrix of their own, numbered as
// NCCL_VERSION_CODE, cached apart from CUDA's, with nccl.h as main header,
// the newest the default.
func TestNCCLVersions(t *testing.T) {
	sha := strings.Repeat("c", 64)
	entry := func(version, tag string) string {
		return `{"version": "` + version + `", "tag": "` + tag + `", "source": {"kind": "file", "path": "/usr/include/nccl.h"}, "sha256": "` + sha + `"}`
	}
	doc := func(entries ...string) []byte {
		return []byte(`{"default": "12.4", "versions": [{"version": "12.4", "tag": "cuda12040", "source": {"kind": "toolkit", "path": "include/cuda.h"}, "sha256": "` + sha + `"}], "nccl": [` + strings.Join(entries, ", ") + `]}`)
	}
	m, err := Parse(doc(entry("2.28.3", "nccl22803"), entry("2.22.3", "nccl22203")), "test")
	if err != nil {
		t.Fatal(err)
	}
	n := m.Matrix(NCCL)
	if n.Default != "2.28.3" {
		t.Errorf("default %q, want the newest, 2.28.3", n.Default)
	}
	v, err := n.Lookup("nccl22203")
	if err != nil {
		t.Fatal(err)
	}
	if v.Number() != 22203 || v.Name() != "NCCL 2.22.3" || v.MainHeader() != "nccl.h" || v.Family() != NCCL {
		t.Errorf("%s: number %d, main header %s, family %s", v.Name(), v.Number(), v.MainHeader(), v.Family().Name)
	}
	t.Setenv("GOCUDA_HEADER_CACHE", "/cache")
	if p, _ := v.HeaderPath(); p != "/cache/nccl-2.22.3/nccl.h" {
		t.Errorf("cached at %s", p)
	}
	if _, err := m.Lookup("2.22.3"); err == nil {
		t.Error("an NCCL version is found among CUDA's")
	}
	good := entry("2.22.3", "nccl22203")
	for _, bad := range []string{
		entry("2.22", "nccl22200"), entry("2.22.3", "cuda22203"), entry("2.22.3", "nccl2223"),
		strings.Replace(good, `"kind": "file", "path": "/usr/include/nccl.h"`, `"kind": "toolkit", "path": "include/nccl.h"`, 1),
		strings.Replace(good, `}, "sha256"`, `}, "headers": [{"name": "cuda_runtime.h", "path": "/usr/include/cuda_runtime.h", "sha256": "`+sha+`"}], "sha256"`, 1),
	} {
		if _, err := Parse(doc(bad), "test"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := Parse(doc(entry("2.22.3", "nccl22203"), entry("2.22.3", "nccl22203")), "test"); err == nil {
		t.Error("a version listed twice accepted")
	}
}

// TestCuDNNVersionsHaveHeadersAndParseWithCUDA: a cuDNN version lists the
// headers cudnn.h includes, is a matrix of its own, and is parsed with the
// runtime headers of the default CUDA version.
func TestCuDNNVersionsHaveHeadersAndParseWithCUDA(t *testing.T) {
	sha := strings.Repeat("d", 64)
	doc := `{"default": "12.4", "versions": [{"version": "12.4", "tag": "cuda12040", "source": {"kind": "toolkit", "path": "include/cuda.h"}, "sha256": "` + sha + `"}],
		"cudnn": [{"version": "9.14.0", "tag": "cudnn91400", "source": {"kind": "file", "path": "/usr/include/cudnn.h"}, "sha256": "` + sha + `",
			"headers": [{"name": "cudnn_version.h", "path": "/usr/include/cudnn_version.h", "sha256": "` + sha + `"}]}]}`
	m, err := Parse([]byte(doc), "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.LookupAny("cudnn91400")
	if err != nil {
		t.Fatal(err)
	}
	if v.Family() != CuDNN || v.Number() != 91400 || v.MainHeader() != "cudnn.h" || len(v.Headers) != 1 {
		t.Fatalf("%s: family %s, number %d, main header %s, %d headers", v.Name(), v.Family().Name, v.Number(), v.MainHeader(), len(v.Headers))
	}
	if w := m.ParsedWith(v); w.Family() != CUDA || w.Version != "12.4" {
		t.Errorf("cuDNN parsed with %s, want CUDA 12.4", w.Name())
	}
	if w := m.ParsedWith(m.Versions[0]); w.Version != "12.4" || w.Family() != CUDA {
		t.Errorf("CUDA 12.4 parsed with %s", w.Name())
	}
	if _, err := Parse([]byte(strings.Replace(doc, `"tag": "cudnn91400"`, `"tag": "cuda91400"`, 1)), "test"); err == nil {
		t.Error("a cuDNN version with a CUDA tag accepted")
	}
}
