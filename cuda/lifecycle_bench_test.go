package cuda

import (
	"errors"
	"github.com/gocuda/gocuda/internal/standin"
	"testing"
)

// BenchmarkLifecycleGoSide is event and stream create+destroy with the
// driver's calls replaced by C functions that do nothing: what remains is
// this package's part (references, accounting, the cleanup's queue, the
// C side's checks), against the two bare cgo calls of a raw program.
//
//	GOCUDA_TEST_DRIVER=fake go test -run '^$' -bench LifecycleGoSide ./cuda
func BenchmarkLifecycleGoSide(b *testing.B) {
	_, ctx := needGPU(b)
	get, create, destroy := standin.Lifecycle(uintptr(ctx.Raw()))
	useEntries(b, func(e *entries) {
		e.ctxGet = get
		e.eventCreate, e.eventDestroy = create, destroy
		e.streamCreate, e.streamDestroy = create, destroy
	})
	errStub := errors.New("the stand-in destroy failed")
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if standin.RawDestroy(destroy, standin.RawCreate(create, 2)) != 0 {
				b.Fatal(errStub)
			}
		}
	})
	b.Run("event", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e, err := NewEvent(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := NewStream(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
