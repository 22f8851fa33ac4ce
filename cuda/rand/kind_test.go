package rand

import "testing"

func TestKinds(t *testing.T) {
	for k, want := range map[Kind]string{Philox: "Philox", XORWOW: "XORWOW", MRG32k3a: "MRG32k3a", MT19937: "MT19937", -1: "Kind(-1)", 4: "Kind(4)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
	var zero Kind
	if zero != Philox {
		t.Fatal("the zero Kind is not Philox")
	}
	for _, k := range []Kind{MT19937} {
		if k.hasOffset() {
			t.Errorf("%v has an offset", k)
		}
	}
}
