package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// APIDiff is what changed from one version's API to another's.
type APIDiff struct {
	From, To string

	FuncsAdded   []APIFunc
	FuncsRemoved []RemovedFunc
	// FuncsChanged are functions whose symbol, result or parameter types
	// changed; a renamed parameter alone is no change.
	FuncsChanged []FuncChange

	EnumsAdded    []APIEnum
	EnumsRemoved  []APIEnum
	ValuesAdded   []ValueChange // of enums in both versions
	ValuesRemoved []ValueChange
	ValuesChanged []ValueChange

	RecordsAdded   []APIRecord
	RecordsRemoved []APIRecord
	RecordsChanged []RecordChange
	// RecordsRenamed are records whose name the new version keeps only as
	// a typedef of another record: C and Go code that names them still
	// compiles. Their Change compares the two layouts.
	RecordsRenamed []RecordRename

	// TypedefsChanged are typedefs in both versions that name another type.
	TypedefsChanged []TypedefChange
}

// RemovedFunc is a function name the new version no longer declares.
// BoundAs is the name under which the new version still declares its
// symbol, if it does (a _v2 name that the plain name now selects).
type RemovedFunc struct {
	Func    APIFunc
	BoundAs string
}

// RecordRename is a record that became a typedef of the record New.
type RecordRename struct {
	Old, New string
	Change   RecordChange
	Changed  bool // whether the layouts differ
}

// TypedefChange is a typedef whose target changed.
type TypedefChange struct {
	Name, Old, New string
}

// FuncChange is a function in both versions, as each declares it.
type FuncChange struct {
	Old, New APIFunc
}

// ValueChange is an enumerator added to, removed from or changed in an enum
// that both versions have. Old is empty for an added one, New for a removed
// one.
type ValueChange struct {
	Enum, Name string
	Old, New   string
}

// RecordChange is a struct or union in both versions whose layout changed.
type RecordChange struct {
	Name               string
	OldSize, NewSize   int64
	OldAlign, NewAlign int
	UnionChanged       bool // a struct became a union or the reverse
	FieldsAdded        []APIField
	FieldsRemoved      []APIField
	FieldsChanged      []FieldChange
}

// FieldChange is a member whose type or offset changed.
type FieldChange struct {
	Old, New APIField
}

// Empty reports whether the two versions have the same API.
func (d *APIDiff) Empty() bool {
	return len(d.FuncsAdded)+len(d.FuncsRemoved)+len(d.FuncsChanged)+
		len(d.EnumsAdded)+len(d.EnumsRemoved)+len(d.ValuesAdded)+len(d.ValuesRemoved)+len(d.ValuesChanged)+
		len(d.RecordsAdded)+len(d.RecordsRemoved)+len(d.RecordsChanged)+len(d.RecordsRenamed)+len(d.TypedefsChanged) == 0
}

// diffAPI compares two versions' APIs. Every list comes in name order
// (enumerators and fields in the order their version declares them).
func diffAPI(old, new *API) *APIDiff {
	d := &APIDiff{From: old.Version, To: new.Version}

	oldFn := map[string]APIFunc{}
	for _, f := range old.Funcs {
		oldFn[f.Name] = f
	}
	newFn := map[string]bool{}
	bySymbol := map[string]string{}
	for _, f := range new.Funcs {
		newFn[f.Name] = true
		bySymbol[f.Symbol] = f.Name
		o, ok := oldFn[f.Name]
		switch {
		case !ok:
			d.FuncsAdded = append(d.FuncsAdded, f)
		case !sameSignature(o, f):
			d.FuncsChanged = append(d.FuncsChanged, FuncChange{o, f})
		}
	}
	for _, f := range old.Funcs {
		if !newFn[f.Name] {
			d.FuncsRemoved = append(d.FuncsRemoved, RemovedFunc{Func: f, BoundAs: bySymbol[f.Symbol]})
		}
	}

	oldEnum := map[string]APIEnum{}
	for _, e := range old.Enums {
		oldEnum[e.Name] = e
	}
	newEnum := map[string]bool{}
	for _, e := range new.Enums {
		newEnum[e.Name] = true
		o, ok := oldEnum[e.Name]
		if !ok {
			d.EnumsAdded = append(d.EnumsAdded, e)
			continue
		}
		oldVal := map[string]string{}
		for _, v := range o.Values {
			oldVal[v.Name] = v.Value
		}
		newVal := map[string]bool{}
		for _, v := range e.Values {
			newVal[v.Name] = true
			ov, ok := oldVal[v.Name]
			switch {
			case !ok:
				d.ValuesAdded = append(d.ValuesAdded, ValueChange{Enum: e.Name, Name: v.Name, New: v.Value})
			case ov != v.Value:
				d.ValuesChanged = append(d.ValuesChanged, ValueChange{Enum: e.Name, Name: v.Name, Old: ov, New: v.Value})
			}
		}
		for _, v := range o.Values {
			if !newVal[v.Name] {
				d.ValuesRemoved = append(d.ValuesRemoved, ValueChange{Enum: e.Name, Name: v.Name, Old: v.Value})
			}
		}
	}
	for _, e := range old.Enums {
		if !newEnum[e.Name] {
			d.EnumsRemoved = append(d.EnumsRemoved, e)
		}
	}

	oldRec := map[string]APIRecord{}
	for _, r := range old.Records {
		oldRec[r.Name] = r
	}
	newRec := map[string]APIRecord{}
	for _, r := range new.Records {
		newRec[r.Name] = r
	}
	newTypedef := map[string]string{}
	for _, td := range new.Typedefs {
		newTypedef[td.Name] = td.Target
	}
	renamedTo := map[string]bool{}
	for _, r := range old.Records {
		if _, ok := newRec[r.Name]; ok {
			continue
		}
		if to, ok := resolveRecord(r.Name, newTypedef, newRec); ok {
			c, changed := diffRecord(r, newRec[to])
			d.RecordsRenamed = append(d.RecordsRenamed, RecordRename{Old: r.Name, New: to, Change: c, Changed: changed})
			renamedTo[to] = true
			continue
		}
		d.RecordsRemoved = append(d.RecordsRemoved, r)
	}
	for _, r := range new.Records {
		o, ok := oldRec[r.Name]
		switch {
		case !ok && !renamedTo[r.Name]:
			d.RecordsAdded = append(d.RecordsAdded, r)
		case ok:
			if c, changed := diffRecord(o, r); changed {
				d.RecordsChanged = append(d.RecordsChanged, c)
			}
		}
	}

	oldTypedef := map[string]string{}
	for _, td := range old.Typedefs {
		oldTypedef[td.Name] = td.Target
	}
	for _, td := range new.Typedefs {
		if o, ok := oldTypedef[td.Name]; ok && o != td.Target {
			d.TypedefsChanged = append(d.TypedefsChanged, TypedefChange{Name: td.Name, Old: o, New: td.Target})
		}
	}
	return d
}

// resolveRecord follows typedefs from name to the record they name.
func resolveRecord(name string, typedefs map[string]string, records map[string]APIRecord) (string, bool) {
	for range len(typedefs) + 1 {
		if _, ok := records[name]; ok {
			return name, true
		}
		next, ok := typedefs[name]
		if !ok {
			return "", false
		}
		name = next
	}
	return "", false // a cycle
}

func sameSignature(a, b APIFunc) bool {
	return a.Symbol == b.Symbol && a.Result == b.Result &&
		slices.EqualFunc(a.Params, b.Params, func(p, q APIParam) bool { return p.Type == q.Type })
}

func diffRecord(o, n APIRecord) (RecordChange, bool) {
	c := RecordChange{Name: n.Name, OldSize: o.Size, NewSize: n.Size, OldAlign: o.Align, NewAlign: n.Align, UnionChanged: o.Union != n.Union}
	oldField := map[string]APIField{}
	for _, f := range o.Fields {
		oldField[f.Name] = f
	}
	newField := map[string]bool{}
	for _, f := range n.Fields {
		newField[f.Name] = true
		of, ok := oldField[f.Name]
		switch {
		case !ok:
			c.FieldsAdded = append(c.FieldsAdded, f)
		case of != f:
			c.FieldsChanged = append(c.FieldsChanged, FieldChange{of, f})
		}
	}
	for _, f := range o.Fields {
		if !newField[f.Name] {
			c.FieldsRemoved = append(c.FieldsRemoved, f)
		}
	}
	changed := c.OldSize != c.NewSize || c.OldAlign != c.NewAlign || c.UnionChanged ||
		len(c.FieldsAdded)+len(c.FieldsRemoved)+len(c.FieldsChanged) > 0
	return c, changed
}

// signature is how the diff shows a function: its symbol and parameters,
// and its result type where that is not CUresult.
func signature(f APIFunc) string {
	var ps []string
	for _, p := range f.Params {
		ps = append(ps, paramSpelling(p))
	}
	s := f.Symbol + "(" + strings.Join(ps, ", ") + ")"
	if f.Result != "CUresult" {
		s = f.Result + " " + s
	}
	return s
}

func fieldSpelling(f APIField) string {
	return fmt.Sprintf("%s %s @%d", f.Name, f.Type, f.Offset)
}

func kind(r APIRecord) string {
	if r.Union {
		return "union"
	}
	return "struct"
}

// markdown writes d as a section of Markdown, headed at level.
func (d *APIDiff) markdown(b *bytes.Buffer, level int) {
	h := strings.Repeat("#", level)
	fmt.Fprintf(b, "%s CUDA %s -> %s\n\n", h, d.From, d.To)
	if d.Empty() {
		b.WriteString("No change.\n\n")
		return
	}
	fmt.Fprintf(b, "Functions: %d added, %d removed, %d changed. Enum values: %d added, %d removed, %d changed; enums: %d added, %d removed. Structs and unions: %d added, %d removed, %d changed, %d renamed. Typedefs: %d changed.\n\n",
		len(d.FuncsAdded), len(d.FuncsRemoved), len(d.FuncsChanged),
		len(d.ValuesAdded), len(d.ValuesRemoved), len(d.ValuesChanged), len(d.EnumsAdded), len(d.EnumsRemoved),
		len(d.RecordsAdded), len(d.RecordsRemoved), len(d.RecordsChanged), len(d.RecordsRenamed), len(d.TypedefsChanged))
	section := func(title string, n int, item func(i int) string) {
		if n == 0 {
			return
		}
		fmt.Fprintf(b, "%s# %s\n\n", h, title)
		for i := 0; i < n; i++ {
			b.WriteString("- " + item(i) + "\n")
		}
		b.WriteString("\n")
	}
	section("Functions changed", len(d.FuncsChanged), func(i int) string {
		c := d.FuncsChanged[i]
		return fmt.Sprintf("%s: `%s` -> `%s`", c.New.Name, signature(c.Old), signature(c.New))
	})
	section("Functions added", len(d.FuncsAdded), func(i int) string {
		f := d.FuncsAdded[i]
		return fmt.Sprintf("%s: `%s`", f.Name, signature(f))
	})
	section("Functions removed", len(d.FuncsRemoved), func(i int) string {
		f := d.FuncsRemoved[i]
		s := fmt.Sprintf("%s: `%s`", f.Func.Name, signature(f.Func))
		if f.BoundAs != "" {
			s += fmt.Sprintf(" (its symbol is now what %s selects)", f.BoundAs)
		}
		return s
	})
	section("Enum values added", len(d.ValuesAdded), func(i int) string {
		v := d.ValuesAdded[i]
		return fmt.Sprintf("%s: %s = %s", v.Enum, v.Name, v.New)
	})
	section("Enum values removed", len(d.ValuesRemoved), func(i int) string {
		v := d.ValuesRemoved[i]
		return fmt.Sprintf("%s: %s = %s", v.Enum, v.Name, v.Old)
	})
	section("Enum values changed", len(d.ValuesChanged), func(i int) string {
		v := d.ValuesChanged[i]
		return fmt.Sprintf("%s: %s = %s -> %s", v.Enum, v.Name, v.Old, v.New)
	})
	section("Enums added", len(d.EnumsAdded), func(i int) string {
		e := d.EnumsAdded[i]
		return fmt.Sprintf("%s (%s)", e.Name, values(len(e.Values)))
	})
	section("Enums removed", len(d.EnumsRemoved), func(i int) string {
		e := d.EnumsRemoved[i]
		return fmt.Sprintf("%s (%s)", e.Name, values(len(e.Values)))
	})
	section("Structs and unions changed", len(d.RecordsChanged), func(i int) string {
		c := d.RecordsChanged[i]
		return c.Name + ": " + c.describe()
	})
	section("Structs and unions renamed", len(d.RecordsRenamed), func(i int) string {
		r := d.RecordsRenamed[i]
		s := fmt.Sprintf("%s -> %s (the old name stays a typedef of it)", r.Old, r.New)
		if r.Changed {
			s += ": " + r.Change.describe()
		}
		return s
	})
	section("Structs and unions added", len(d.RecordsAdded), func(i int) string {
		r := d.RecordsAdded[i]
		return fmt.Sprintf("%s (%s, %d bytes)", r.Name, kind(r), r.Size)
	})
	section("Structs and unions removed", len(d.RecordsRemoved), func(i int) string {
		r := d.RecordsRemoved[i]
		return fmt.Sprintf("%s (%s, %d bytes)", r.Name, kind(r), r.Size)
	})
	section("Typedefs changed", len(d.TypedefsChanged), func(i int) string {
		c := d.TypedefsChanged[i]
		return fmt.Sprintf("%s: `%s` -> `%s`", c.Name, c.Old, c.New)
	})
}

// describe lists what changed in a record's layout.
func (c RecordChange) describe() string {
	var parts []string
	if c.UnionChanged {
		parts = append(parts, "struct and union swapped")
	}
	if c.OldSize != c.NewSize {
		parts = append(parts, fmt.Sprintf("size %d -> %d", c.OldSize, c.NewSize))
	}
	if c.OldAlign != c.NewAlign {
		parts = append(parts, fmt.Sprintf("alignment %d -> %d", c.OldAlign, c.NewAlign))
	}
	for _, f := range c.FieldsAdded {
		parts = append(parts, "added `"+fieldSpelling(f)+"`")
	}
	for _, f := range c.FieldsRemoved {
		parts = append(parts, "removed `"+fieldSpelling(f)+"`")
	}
	for _, f := range c.FieldsChanged {
		parts = append(parts, "`"+fieldSpelling(f.Old)+"` -> `"+fieldSpelling(f.New)+"`")
	}
	return strings.Join(parts, "; ")
}

func values(n int) string {
	if n == 1 {
		return "1 value"
	}
	return fmt.Sprintf("%d values", n)
}

// apiChangesFile is the diff across the matrix, next to the generated code.
const apiChangesFile = "API_CHANGES.md"

// apiChanges renders the diff of each version of the matrix to the next,
// for the versions in apis (ascending); missing lists those without API
// data, which are left out.
func apiChanges(apis []*API, missing []string) []byte {
	var b bytes.Buffer
	b.WriteString("<!-- go run ./gen -all -->\n")
	b.WriteString("<!-- Code generated by the command above from the API of each version of headers/versions.json (zcu_<tag>_api.txt); DO NOT EDIT. -->\n\n")
	b.WriteString("# API changes across the CUDA versions of the matrix\n\n")
	b.WriteString("What changed in `cuda.h` from each version to the next: functions (with the versioned symbol\n")
	b.WriteString("each name selects), enum values, and the layout of structs and unions (member `name type @offset`).\n")
	b.WriteString("`go run ./gen -diff A B` compares any two versions.\n\n")
	b.WriteString("| CUDA | functions | enums | structs and unions |\n|---|---|---|---|\n")
	for _, a := range apis {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", a.Version, len(a.Funcs), len(a.Enums), len(a.Records))
	}
	b.WriteString("\n")
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Not compared, for want of their API data (generate them where their header is): CUDA %s.\n\n", strings.Join(missing, ", "))
	}
	for i := 1; i < len(apis); i++ {
		diffAPI(apis[i-1], apis[i]).markdown(&b, 2)
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}
