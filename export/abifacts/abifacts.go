// Package abifacts reads a DAT ABI layout table: one fact per row, tab
// separated (kind, name, parent, size, offset or value, C type), as in
// ctest/abi/dat12-ofed-layout.tsv. The export layer's generator (api.c)
// and its tests read the DAT 1.2 facts through it; ctest/abigen checks the
// headers against the same rows.
package abifacts

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Row is one fact.
type Row struct {
	Kind, Name, Parent, Size, Value, CType string
	Line                                   int
}

// Param is one parameter of a function.
type Param struct {
	Name, CType string
}

// Func is a function row with its parameters, in order.
type Func struct {
	Name   string
	Header string // the header declaring it
	Params []Param
}

// Facts are the rows of one table, with the functions and enumerators
// gathered.
type Facts struct {
	Rows  []Row
	Funcs []*Func
	// FuncTypes are the function types (kind functype: the provider
	// table's slots, the agent function).
	FuncTypes []*Func
	// Enums maps an enumerator (kind enum) to its value.
	Enums map[string]uint64
	// Types maps a typedef (kind type) to the type it names.
	Types map[string]string
	// Structs maps a struct or union typedef (kind struct) to its C type
	// ("struct dat_x", "union dat_y").
	Structs map[string]string
}

// Read reads the table at path.
func Read(path string) (*Facts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	facts, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return facts, nil
}

// Parse reads a table. The first line is the column header; blank lines
// and lines starting with # are skipped. A param row names its function in
// (or function type) in the parent column and is "index:name" in the name
// column; it must follow its func or functype row.
func Parse(r io.Reader) (*Facts, error) {
	f := &Facts{Enums: map[string]uint64{}, Types: map[string]string{}, Structs: map[string]string{}}
	byName := map[string]*Func{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 && strings.HasPrefix(text, "kind\t") || text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		c := strings.Split(text, "\t")
		if len(c) != 6 {
			return nil, fmt.Errorf("line %d: %d columns, want 6", line, len(c))
		}
		row := Row{Kind: c[0], Name: c[1], Parent: c[2], Size: c[3], Value: c[4], CType: c[5], Line: line}
		f.Rows = append(f.Rows, row)
		switch row.Kind {
		case "enum":
			v, err := strconv.ParseUint(row.Value, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: enum %s: %v", line, row.Name, err)
			}
			f.Enums[row.Name] = v
		case "type":
			f.Types[row.Name] = row.CType
		case "struct":
			f.Structs[row.Name] = row.CType
		case "func", "functype":
			fn := &Func{Name: row.Name, Header: row.Parent}
			if row.Kind == "func" {
				f.Funcs = append(f.Funcs, fn)
			} else {
				f.FuncTypes = append(f.FuncTypes, fn)
			}
			byName[row.Name] = fn
		case "param":
			fn := byName[row.Parent]
			if fn == nil {
				return nil, fmt.Errorf("line %d: param of %s before its func row", line, row.Parent)
			}
			idx, name, ok := strings.Cut(row.Name, ":")
			if n, err := strconv.Atoi(idx); !ok || err != nil || n != len(fn.Params) {
				return nil, fmt.Errorf("line %d: param %q of %s: want index %d", line, row.Name, row.Parent, len(fn.Params))
			}
			fn.Params = append(fn.Params, Param{Name: name, CType: row.CType})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return f, nil
}

// Func returns the function named name, nil if there is none.
func (f *Facts) Func(name string) *Func {
	for _, fn := range f.Funcs {
		if fn.Name == name {
			return fn
		}
	}
	return nil
}

// Resolve follows typedefs from t to the type at the end of the chain,
// returning every name on the way (t first). A type the table does not
// define ends the chain.
func (f *Facts) Resolve(t string) []string {
	chain := []string{t}
	for i := 0; i < 16; i++ {
		next, ok := f.Types[t]
		if !ok {
			break
		}
		chain = append(chain, next)
		t = next
	}
	return chain
}
