package nvtx

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Domain is a named group of events, shown apart from the others by the
// profiler, with categories and registered strings of its own: a library
// uses one so that its ranges can be told from the program's. The nil
// *Domain is NVTX's default domain, the one the package-level functions
// use.
//
// A Domain lives as long as the process: NewDomain returns the same one
// for the same name, and the tool learns of it on its first event.
type Domain struct {
	name string

	once sync.Once
	h    unsafe.Pointer // the tool's handle; nil where it gave none

	mu      sync.Mutex
	strings map[string]*String
}

var domains sync.Map // name → *Domain

// NewDomain returns the domain of the given name, the same *Domain for
// the same name; the empty name is the default domain (nil). It costs
// nothing where no tool is attached.
func NewDomain(name string) *Domain {
	if name == "" {
		return nil
	}
	if d, ok := domains.Load(name); ok {
		return d.(*Domain)
	}
	d, _ := domains.LoadOrStore(name, &Domain{name: name})
	return d.(*Domain)
}

// Name returns the domain's name, "" for the default domain.
func (d *Domain) Name() string {
	if d == nil {
		return ""
	}
	return d.name
}

// raw returns the tool's handle of d, creating the domain in the tool on
// first use; nil for the default domain. Only called with a tool attached.
func (d *Domain) raw() unsafe.Pointer {
	if d == nil {
		return nil
	}
	d.once.Do(func() { d.h = callDomainCreate(d.name) })
	return d.h
}

// NameCategory names category id of the default domain, for the events
// whose Attributes.Category is id.
func NameCategory(id uint32, name string) {
	(*Domain)(nil).NameCategory(id, name)
}

// NameCategory names category id of d, for d's events whose
// Attributes.Category is id.
func (d *Domain) NameCategory(id uint32, name string) {
	if !off() && on() {
		callNameCategory(d.raw(), d != nil, id, name)
	}
}

// String is a string registered in a domain: events that name it in
// Attributes.Registered send the tool its handle rather than the text,
// which saves the tool copying and looking up a name on every event of a
// hot path.
type String struct {
	d    *Domain
	text string

	// Not a sync.Once, nor a mutex of its own: either makes the String,
	// and so every event's attributes, escape to the heap.
	done atomic.Bool
	h    unsafe.Pointer
}

// RegisterString returns s registered in d, the same *String for the same
// text. The registration reaches the tool with the first event that uses
// it. In the default domain (nil) nothing is registered: events send the
// text.
func (d *Domain) RegisterString(s string) *String {
	if d == nil {
		return &String{text: s}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.strings[s]; ok {
		return r
	}
	if d.strings == nil {
		d.strings = map[string]*String{}
	}
	r := &String{d: d, text: s}
	d.strings[s] = r
	return r
}

// String returns the registered text.
func (s *String) String() string {
	return s.text
}

// handle returns the tool's handle of s, registering it on first use; nil
// where the tool gave none. Only called with a tool attached.
func (s *String) handle() unsafe.Pointer {
	if !s.done.Load() {
		s.register()
	}
	return s.h
}

func (s *String) register() {
	registerMu.Lock()
	if !s.done.Load() {
		if d := s.d.raw(); d != nil {
			s.h = callRegisterString(d, s.text)
		}
		s.done.Store(true)
	}
	registerMu.Unlock()
}

// registerMu serializes the registrations of strings, which are few.
var registerMu sync.Mutex
