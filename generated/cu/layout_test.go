//go:build linux && (amd64 || arm64)

package cu

import "testing"

type recordLayout struct {
	name          string
	goSize, cSize uintptr
	fields        []fieldLayout
}

type fieldLayout struct {
	name              string
	goOffset, cOffset uintptr
}

// TestRecordLayouts checks that every generated struct and union has the
// size and field offsets of its C original.
func TestRecordLayouts(t *testing.T) {
	if len(recordLayouts) == 0 {
		t.Fatal("no records to check")
	}
	for _, r := range recordLayouts {
		if r.goSize != r.cSize {
			t.Errorf("%s: Go size %d, C size %d", r.name, r.goSize, r.cSize)
		}
		for _, f := range r.fields {
			if f.goOffset != f.cOffset {
				t.Errorf("%s.%s: Go offset %d, C offset %d", r.name, f.name, f.goOffset, f.cOffset)
			}
		}
	}
	t.Logf("%d records checked", len(recordLayouts))
}
