package nvtx

// NotTracked is what Push and Pop return where no tool is attached or the
// tool does not track push/pop ranges (NVTX's NVTX_NO_PUSH_POP_TRACKING).
const NotTracked = -2

// Push starts a range named name in the default domain, nested in the
// ranges pushed before it on the same OS thread, and returns its zero-based
// depth (negative: an error, or NotTracked).
//
// Push/pop ranges belong to the calling OS thread, and a goroutine may
// move to another thread between Push and Pop: use them only between
// runtime.LockOSThread and runtime.UnlockOSThread, or use Start and End
// (and Range), which any goroutine on any thread may end.
func Push(name string) int {
	if off() {
		return NotTracked
	}
	return (*Domain)(nil).push(&Attributes{Message: name})
}

// PushWith is Push with attributes.
func PushWith(a Attributes) int {
	if off() {
		return NotTracked
	}
	return (*Domain)(nil).push(&a)
}

// Pop ends the range the calling OS thread pushed last in the default
// domain and returns its depth (negative: an error, or NotTracked).
func Pop() int {
	if off() {
		return NotTracked
	}
	return (*Domain)(nil).pop()
}

// Push is the package-level Push in d, with its rule on threads.
func (d *Domain) Push(name string) int {
	if off() {
		return NotTracked
	}
	return d.push(&Attributes{Message: name})
}

// PushWith is Push with attributes.
func (d *Domain) PushWith(a Attributes) int {
	if off() {
		return NotTracked
	}
	return d.push(&a)
}

// Pop ends the range the calling OS thread pushed last in d.
func (d *Domain) Pop() int {
	if off() {
		return NotTracked
	}
	return d.pop()
}

func (d *Domain) pop() int {
	if !on() {
		return NotTracked
	}
	return callPop(d.raw(), d != nil)
}

func (d *Domain) push(a *Attributes) int {
	if !on() {
		return NotTracked
	}
	e := makeEvent(d, a)
	return callPush(d.raw(), d != nil, &e)
}
