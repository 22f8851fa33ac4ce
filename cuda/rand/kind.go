package rand

import "fmt"

// Kind is a pseudo-random generator algorithm of cuRAND.
//
// cuRAND's MTGP32 is left out: reseeding it after it has generated does
// not restart its sequence (seen with the cuRAND of CUDA 13.0), so it
// cannot keep SetSeed's promise. The quasi-random Sobol generators, which
// take dimensions rather than a seed, are not bound yet.
type Kind int

const (
	// Philox is Philox4x32-10 (CURAND_RNG_PSEUDO_PHILOX4_32_10), a
	// counter-based generator: fast, small state, and the zero Kind.
	Philox Kind = iota
	// XORWOW is cuRAND's default generator (CURAND_RNG_PSEUDO_XORWOW).
	XORWOW
	// MRG32k3a is L'Ecuyer's combined multiple recursive generator
	// (CURAND_RNG_PSEUDO_MRG32K3A).
	MRG32k3a
	// MT19937 is the Mersenne Twister MT19937 (CURAND_RNG_PSEUDO_MT19937).
	// It has no offset: SetOffset fails.
	MT19937
)

var kindNames = [...]string{
	Philox:   "Philox",
	XORWOW:   "XORWOW",
	MRG32k3a: "MRG32k3a",
	MT19937:  "MT19937",
}

func (k Kind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

func (k Kind) valid() bool { return k >= 0 && int(k) < len(kindNames) }

// hasOffset reports whether cuRAND lets the generator's offset be set.
func (k Kind) hasOffset() bool { return k != MT19937 }
