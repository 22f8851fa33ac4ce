//go:build linux && (amd64 || arm64)

package rand

import (
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/curand"
)

func TestEveryKindHasItsCuRANDType(t *testing.T) {
	if len(rawKinds) != len(kindNames) {
		t.Fatalf("%d cuRAND types for %d kinds", len(rawKinds), len(kindNames))
	}
	for k := range Kind(len(kindNames)) {
		if !strings.Contains(strings.ToUpper(rawKinds[k].String()), strings.ToUpper(k.String()[:3])) {
			t.Errorf("%v is %v", k, rawKinds[k])
		}
	}
	if rawKinds[Philox] != curand.CURAND_RNG_PSEUDO_PHILOX4_32_10 {
		t.Fatal("Philox")
	}
}

// TestSetOffsetOnAMersenneTwisterFailsBeforeCuRAND uses a generator with
// no cuRAND object behind it: the error must come before any call.
func TestSetOffsetOnAMersenneTwisterFailsBeforeCuRAND(t *testing.T) {
	for _, k := range []Kind{MT19937} {
		g := &Generator{sh: &shared{kind: k}}
		err := g.SetOffset(1)
		if err == nil || !strings.Contains(err.Error(), k.String()+" generators have no offset") {
			t.Errorf("SetOffset on %v = %v", k, err)
		}
	}
}
