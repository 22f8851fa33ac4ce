package cuda

import "sync/atomic"

// The driver objects this package holds, per kind (objectKind.live).
var (
	liveContexts, liveStreams, liveEvents        atomic.Int64
	liveDeviceMemory, liveHostBuffers            atomic.Int64
	liveManagedMemory, liveMemPools, liveModules atomic.Int64
	liveGraphs, liveGraphExecs                   atomic.Int64
	// liveLibraryObjects counts the library objects of every kind.
	liveLibraryObjects atomic.Int64
	// Virtual memory and memory imported from other processes (vmm.go,
	// ipc.go); liveRangeViews counts the Slices of RangeSlice, which hold
	// their range.
	livePhysicalMemory, liveAddressRanges, liveRangeViews atomic.Int64
	liveIPCImports                                        atomic.Int64
	liveGreenContexts                                     atomic.Int64
)

// LiveHandles reports how many driver objects of each kind this package
// holds now: every one created, retained or wrapped and not yet destroyed
// (or released) by the driver. It exists for leak tests; the numbers count
// driver objects, not handles, and include objects whose destroy the
// driver refused and that wait for a retry (see ErrDeferred).
func LiveHandles() (contexts, streams, events int) {
	return int(liveContexts.Load()), int(liveStreams.Load()), int(liveEvents.Load())
}

// LiveCounts is a snapshot of the driver objects this package holds: every
// one created and not yet released by its last handle's Close (or by the
// cleanup of unreachable handles). It exists for leak tests.
type LiveCounts struct {
	Contexts, Streams, Events int
	DeviceMemory, HostBuffers int
	Modules                   int
	Graphs, GraphExecs        int
	MemPools                  int
	ManagedMemory             int
	// LibraryObjects counts the LibraryObjects of every library.
	LibraryObjects int
	// PhysicalMemory and AddressRanges count virtual memory's objects
	// (NewPhysicalMemory, ReserveAddressRange); IPCImports the memory
	// opened from another process's IPCMemHandle.
	PhysicalMemory, AddressRanges, IPCImports int
	// GreenContexts counts the green contexts (NewGreenContext), which
	// Contexts does not.
	GreenContexts int
	// Deferred counts the objects above whose destroy the driver refused
	// and that wait for a retry (ErrDeferred).
	Deferred int
}

// LiveObjects returns the number of driver objects of each kind this
// package holds now; LiveHandles is its first three fields.
func LiveObjects() LiveCounts {
	c, s, e := LiveHandles()
	return LiveCounts{
		Contexts: c, Streams: s, Events: e,
		DeviceMemory: int(liveDeviceMemory.Load()), HostBuffers: int(liveHostBuffers.Load()),
		Modules: int(liveModules.Load()),
		Graphs:  int(liveGraphs.Load()), GraphExecs: int(liveGraphExecs.Load()),
		MemPools:       int(liveMemPools.Load()),
		ManagedMemory:  int(liveManagedMemory.Load()),
		LibraryObjects: int(liveLibraryObjects.Load()),
		GreenContexts:  int(liveGreenContexts.Load()),
		Deferred:       int(deferredCount.Load()),
		PhysicalMemory: int(livePhysicalMemory.Load()),
		AddressRanges:  int(liveAddressRanges.Load()),
		IPCImports:     int(liveIPCImports.Load()),
	}
}
