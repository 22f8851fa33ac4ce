package nvtx

// Mark records an instant event named name in the default domain.
func Mark(name string) {
	if !off() {
		(*Domain)(nil).mark(&Attributes{Message: name})
	}
}

// MarkWith records an instant event with the given attributes in the
// default domain.
func MarkWith(a Attributes) {
	if !off() {
		(*Domain)(nil).mark(&a)
	}
}

// Mark records an instant event named name in d.
func (d *Domain) Mark(name string) {
	if !off() {
		d.mark(&Attributes{Message: name})
	}
}

// MarkWith records an instant event with the given attributes in d.
func (d *Domain) MarkWith(a Attributes) {
	if !off() {
		d.mark(&a)
	}
}

func (d *Domain) mark(a *Attributes) {
	if !on() {
		return
	}
	e := makeEvent(d, a)
	callMark(d.raw(), d != nil, &e)
}
