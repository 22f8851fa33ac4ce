package nvtx

// RangeID is a range started by Start or Domain.Start; End ends it. It
// is a plain value: it may be ended on any goroutine and any thread, since
// NVTX's start/end ranges are identified by a process-wide id, not by the
// thread. End each range once.
type RangeID struct {
	d    *Domain
	id   uint64
	live bool // a tool got the start
}

// End ends the range. Where no tool was attached at its start it does
// nothing.
func (r RangeID) End() {
	if r.live {
		r.end()
	}
}

func (r RangeID) end() {
	callRangeEnd(r.d.raw(), r.d != nil, r.id)
}

// ID returns the id the tool gave the range, 0 where no tool was attached.
func (r RangeID) ID() uint64 {
	return r.id
}

func nop() {}

// Start starts a range named name in the default domain.
func Start(name string) RangeID {
	if off() {
		return RangeID{}
	}
	return (*Domain)(nil).start(&Attributes{Message: name})
}

// StartWith starts a range with the given attributes in the default
// domain.
func StartWith(a Attributes) RangeID {
	if off() {
		return RangeID{}
	}
	return (*Domain)(nil).start(&a)
}

// Range starts a range named name in the default domain and returns the
// function that ends it, for
//
//	defer nvtx.Range("decode")()
func Range(name string) func() {
	if off() {
		return nop
	}
	return (*Domain)(nil).ender(&Attributes{Message: name})
}

// RangeWith is Range with attributes.
func RangeWith(a Attributes) func() {
	if off() {
		return nop
	}
	return (*Domain)(nil).ender(&a)
}

// Start starts a range named name in d.
func (d *Domain) Start(name string) RangeID {
	if off() {
		return RangeID{}
	}
	return d.start(&Attributes{Message: name})
}

// StartWith starts a range with the given attributes in d.
func (d *Domain) StartWith(a Attributes) RangeID {
	if off() {
		return RangeID{}
	}
	return d.start(&a)
}

// Range starts a range named name in d and returns the function that ends
// it. Where no tool is attached it returns a function that does nothing,
// without allocating.
func (d *Domain) Range(name string) func() {
	if off() {
		return nop
	}
	return d.ender(&Attributes{Message: name})
}

// RangeWith is Range with attributes.
func (d *Domain) RangeWith(a Attributes) func() {
	if off() {
		return nop
	}
	return d.ender(&a)
}

func (d *Domain) start(a *Attributes) RangeID {
	if !on() {
		return RangeID{}
	}
	e := makeEvent(d, a)
	return RangeID{d: d, id: callRangeStart(d.raw(), d != nil, &e), live: true}
}

// ender starts a range and returns its End, or nop where no tool attached.
// Kept out of line so that Range and RangeWith inline.
//
//go:noinline
func (d *Domain) ender(a *Attributes) func() {
	r := d.start(a)
	if !r.live {
		return nop
	}
	return r.End
}
