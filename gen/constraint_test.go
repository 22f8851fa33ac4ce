package main

import (
	"go/build/constraint"
	"testing"
)

// evalConstraint evaluates a //go:build expression for a tag set.
func evalConstraint(expr string, tags map[string]bool) bool {
	if expr == "" {
		return true
	}
	e, err := constraint.Parse("//go:build " + expr)
	if err != nil {
		panic(err)
	}
	return e.Eval(func(tag string) bool { return tags[tag] })
}

func TestEvalConstraint(t *testing.T) {
	if !evalConstraint("a && !b", map[string]bool{"a": true}) || evalConstraint("a && !b", map[string]bool{"a": true, "b": true}) {
		t.Fatal("constraint evaluation is wrong")
	}
}
