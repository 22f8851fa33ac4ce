package dropped

import "testing"

func TestSinceNamesOnlyNewDrops(t *testing.T) {
	Add("stream")
	before := Counts()
	if got := Since(before); got != "" {
		t.Fatalf("Since(now) = %q, want nothing", got)
	}
	Add("stream")
	Add("event")
	Add("stream")
	if got, want := Since(before), "event 1, stream 2"; got != want {
		t.Errorf("Since = %q, want %q", got, want)
	}
}
