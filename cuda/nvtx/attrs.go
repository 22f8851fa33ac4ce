package nvtx

import (
	"math"
	"unsafe"
)

// Attributes describe an event (a range or a mark) beyond its name.
type Attributes struct {
	// Message is the event's name, as the profiler shows it. It is a C
	// string to the tool: a NUL byte ends it.
	Message string
	// Registered, if set, replaces Message with a string registered in
	// the event's domain (Domain.RegisterString): the tool gets a handle
	// instead of the text on every event. Where the handle cannot be had
	// (another domain, or a tool that does not register strings) its
	// text is sent instead.
	Registered *String
	// Color is the event's color; zero leaves it to the profiler.
	Color Color
	// Category groups events; names are given with NameCategory. Zero
	// is no category.
	Category uint32
	// Payload is a number attached to the event (Int64, Float64, …);
	// the zero Payload is none.
	Payload Payload
}

// Color is an ARGB color: alpha in the top byte, then red, green and
// blue. The zero Color means none; a color from RGB is never zero.
type Color uint32

// RGB returns the opaque color of the given components.
func RGB(r, g, b uint8) Color {
	return ARGB(0xff, r, g, b)
}

// ARGB returns the color of the given components.
func ARGB(a, r, g, b uint8) Color {
	return Color(uint32(a)<<24 | uint32(r)<<16 | uint32(g)<<8 | uint32(b))
}

// A few opaque colors.
const (
	Red    Color = 0xffff0000
	Green  Color = 0xff00ff00
	Blue   Color = 0xff0000ff
	Yellow Color = 0xffffff00
	Cyan   Color = 0xff00ffff
	Purple Color = 0xff800080
	Orange Color = 0xffffa500
	Gray   Color = 0xff808080
)

// Payload is a number attached to an event, of one of NVTX's payload
// types; the profiler shows it with the event.
type Payload struct {
	kind int32
	bits uint64
}

// NVTX's payload types.
const (
	payloadNone int32 = iota
	payloadUint64
	payloadInt64
	payloadFloat64
	payloadUint32
	payloadInt32
	payloadFloat32
)

// Uint64 returns an unsigned 64-bit payload.
func Uint64(v uint64) Payload { return Payload{payloadUint64, v} }

// Int64 returns a signed 64-bit payload.
func Int64(v int64) Payload { return Payload{payloadInt64, uint64(v)} }

// Float64 returns a double-precision payload.
func Float64(v float64) Payload { return Payload{payloadFloat64, math.Float64bits(v)} }

// Uint32 returns an unsigned 32-bit payload.
func Uint32(v uint32) Payload { return Payload{payloadUint32, uint64(v)} }

// Int32 returns a signed 32-bit payload.
func Int32(v int32) Payload { return Payload{payloadInt32, uint64(uint32(v))} }

// Float32 returns a single-precision payload.
func Float32(v float32) Payload { return Payload{payloadFloat32, uint64(math.Float32bits(v))} }

// event is an event's attributes as the C side takes them (tool_cgo.go).
type event struct {
	msg      string
	reg      unsafe.Pointer
	category uint32
	color    Color
	ptype    int32
	payload  uint64
}

// makeEvent resolves a's message for an event of domain d.
func makeEvent(d *Domain, a *Attributes) event {
	e := event{msg: a.Message, category: a.Category, color: a.Color, ptype: a.Payload.kind, payload: a.Payload.bits}
	if s := a.Registered; s != nil {
		e.msg = s.text
		if s.d == d && d != nil {
			e.reg = s.handle()
		}
	}
	return e
}
