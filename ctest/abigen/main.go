// Command abigen turns the DAT ABI layout table (one fact per row, see
// ctest/abi/dat12-ofed-layout.tsv) into a C program that checks the
// headers in include/dat against every row.
//
// Usage:
//
//	abigen [-o out.c] layout.tsv
//
// The generated program includes <dat/udat.h> and the provider headers,
// needs no library, and checks:
//
//   - struct, type: sizeof, _Alignof and the type itself (tag, typedef
//     target) at run time;
//   - field, slot: sizeof, offsetof and the member type at run time;
//   - enum, const: the value (and for consts the size and type) at run time;
//   - param: the size of the parameter type at run time;
//   - func, functype: the exact prototype at compile time (a mismatch is an
//     incompatible-pointer assignment, an error under -Werror, plus a
//     _Static_assert);
//   - macro: function-like redirection macros are called through a fake
//     provider table and must reach the named slot; aliases must be macros
//     expanding to their target and meaning the same (value, type, or
//     member offset); DAT_GET_TYPE & co are run on sample codes.
//
// It prints "FAIL kind name: expected X got Y" per failing row, and "FAIL
// kind name: not checked: why" per row it does not know how to check, and
// ends with "N checked, M failed"; the exit status is non-zero when a row
// failed or was not checked, so the check cannot pass while a row fails.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// row is one fact of the layout table.
type row struct {
	kind, name, parent, size, value, ctype string
	line                                   int
}

func main() {
	out := flag.String("o", "", "write the C program to this file (default: standard output)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: abigen [-o out.c] layout.tsv\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	rows, err := readTable(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "abigen:", err)
		os.Exit(1)
	}
	src, err := generate(rows, filepath.Base(flag.Arg(0)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "abigen:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = io.WriteString(os.Stdout, src)
	} else {
		err = os.WriteFile(*out, []byte(src), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "abigen:", err)
		os.Exit(1)
	}
}

// readTable parses the tab-separated table; the first line is the header.
func readTable(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 6 {
			return nil, fmt.Errorf("%s:%d: want 6 tab-separated columns, got %d", path, n, len(cols))
		}
		if n == 1 && cols[0] == "kind" {
			continue
		}
		rows = append(rows, row{cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], n})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New(path + ": no rows")
	}
	return rows, nil
}

// funcType splits "RET (P1, P2)" into its return type and parameter types.
func funcType(ctype string) (ret string, params []string, err error) {
	i := strings.Index(ctype, "(")
	if i < 0 || !strings.HasSuffix(ctype, ")") {
		return "", nil, fmt.Errorf("not a function type: %q", ctype)
	}
	ret = strings.TrimSpace(ctype[:i])
	inner := strings.TrimSpace(ctype[i+1 : len(ctype)-1])
	if inner == "" || inner == "void" {
		return ret, nil, nil
	}
	return ret, splitTop(inner), nil
}

// splitTop splits s at commas that are not inside parentheses or brackets.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// macroArgs returns the parameter names of a "function-like macro (a,b)" row.
func macroArgs(ctype string) ([]string, bool) {
	const p = "function-like macro ("
	if !strings.HasPrefix(ctype, p) || !strings.HasSuffix(ctype, ")") {
		return nil, false
	}
	inner := ctype[len(p) : len(ctype)-1]
	if inner == "" {
		return nil, true
	}
	args := strings.Split(inner, ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	return args, true
}

// cstr quotes s as a C string literal.
func cstr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		case c == '?':
			b.WriteString(`\?`) // no trigraphs
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// number is an expected integer value from the table.
type number struct {
	text   string // as written in the table
	c      string // as a C unsigned long long expression
	signed bool   // print "got" values as signed decimal
}

func parseNumber(s string) (number, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return number{}, err
		}
		return number{s, fmt.Sprintf("(unsigned long long) (%dLL)", v), true}, nil
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return number{}, err
	}
	return number{s, fmt.Sprintf("0x%xULL", v), false}, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// isIdent reports whether s is a C identifier.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || unicode.IsLetter(c) || (i > 0 && unicode.IsDigit(c))) || c > unicode.MaxASCII {
			return false
		}
	}
	return true
}

// gen accumulates the pieces of the generated program.
type gen struct {
	top     strings.Builder // file-scope declarations and compile-time checks
	ct      strings.Builder // body of abi_compile_time()
	setup   strings.Builder // body of abi_setup(): fills the fake provider
	run     []string        // one block per row, in table order
	ids     int
	byName  map[string][]row
	ftypes  map[string]row // functype rows by name
	slots   []row          // slot rows in table order
	slotIdx map[string]int // slot name -> index in slots
}

func (g *gen) id() int { g.ids++; return g.ids }

// find returns the first row of one of the given kinds with that name.
func (g *gen) find(name string, kinds ...string) (row, bool) {
	for _, r := range g.byName[name] {
		for _, k := range kinds {
			if r.kind == k {
				return r, true
			}
		}
	}
	return row{}, false
}

func generate(rows []row, source string) (string, error) {
	g := &gen{
		byName:  map[string][]row{},
		ftypes:  map[string]row{},
		slotIdx: map[string]int{},
	}
	for _, r := range rows {
		g.byName[r.name] = append(g.byName[r.name], r)
		switch r.kind {
		case "functype":
			g.ftypes[r.name] = r
		case "slot":
			g.slotIdx[r.name] = len(g.slots)
			g.slots = append(g.slots, r)
		}
	}
	if err := g.fakeProvider(); err != nil {
		return "", err
	}
	for _, r := range rows {
		var err error
		switch r.kind {
		case "struct", "type":
			err = g.typeRow(r)
		case "field", "slot":
			err = g.fieldRow(r)
		case "enum", "const":
			err = g.valueRow(r)
		case "param":
			err = g.paramRow(r)
		case "func":
			err = g.funcRow(r)
		case "functype":
			err = g.functypeRow(r)
		case "macro":
			err = g.macroRow(r)
		default:
			g.skip(r, "unknown kind of row")
		}
		if err != nil {
			return "", fmt.Errorf("line %d (%s %s): %w", r.line, r.kind, r.name, err)
		}
	}
	return g.program(source), nil
}

// label names a row in messages: members and parameters with their parent.
func label(r row) string {
	switch r.kind {
	case "field", "slot", "param":
		return r.parent + "." + r.name
	}
	return r.name
}

// check adds a run-time block counted as one checked row.
func (g *gen) check(r row, body string) {
	g.run = append(g.run, fmt.Sprintf("\t/* %d: %s %s */\n\tabi_begin();\n%s\tabi_end();\n",
		r.line, r.kind, label(r), body))
}

// skip adds a row the generator cannot check; it fails the run.
func (g *gen) skip(r row, why string) {
	g.run = append(g.run, fmt.Sprintf("\t/* %d: %s %s */\n\tabi_skip(%s, %s, %s);\n",
		r.line, r.kind, label(r), cstr(r.kind), cstr(label(r)), cstr(why)))
}

func (g *gen) typeRow(r row) error {
	size, err := strconv.ParseUint(r.size, 10, 64)
	if err != nil {
		return fmt.Errorf("size: %w", err)
	}
	align, err := strconv.ParseUint(r.value, 10, 64)
	if err != nil {
		return fmt.Errorf("alignment: %w", err)
	}
	k, n := cstr(r.kind), cstr(label(r))
	var b strings.Builder
	fmt.Fprintf(&b, "\tabi_num(%s, %s, \"size\", %d, sizeof(%s));\n", k, n, size, r.name)
	fmt.Fprintf(&b, "\tabi_num(%s, %s, \"alignment\", %d, _Alignof(%s));\n", k, n, align, r.name)
	fmt.Fprintf(&b, "\tabi_type(%s, %s, %s,\n\t    __builtin_types_compatible_p(%s, %s));\n",
		k, n, cstr(r.ctype), r.name, r.ctype)
	g.check(r, b.String())
	return nil
}

func (g *gen) fieldRow(r row) error {
	size, err := strconv.ParseUint(r.size, 10, 64)
	if err != nil {
		return fmt.Errorf("size: %w", err)
	}
	off, err := strconv.ParseUint(r.value, 10, 64)
	if err != nil {
		return fmt.Errorf("offset: %w", err)
	}
	k, n := cstr(r.kind), cstr(label(r))
	member := fmt.Sprintf("((%s *) 0)->%s", r.parent, r.name)
	var b strings.Builder
	fmt.Fprintf(&b, "\tabi_num(%s, %s, \"size\", %d, sizeof(%s));\n", k, n, size, member)
	fmt.Fprintf(&b, "\tabi_num(%s, %s, \"offset\", %d, offsetof(%s, %s));\n", k, n, off, r.parent, r.name)
	fmt.Fprintf(&b, "\tabi_type(%s, %s, %s,\n\t    __builtin_types_compatible_p(__typeof__(%s), %s));\n",
		k, n, cstr(r.ctype), member, r.ctype)
	g.check(r, b.String())
	return nil
}

func (g *gen) valueRow(r row) error {
	k, n := cstr(r.kind), cstr(label(r))
	var b strings.Builder
	switch r.ctype {
	case "string":
		want, err := strconv.Unquote(r.value)
		if err != nil {
			return fmt.Errorf("string value: %w", err)
		}
		fmt.Fprintf(&b, "\tabi_num(%s, %s, \"size\", %s, sizeof(%s));\n", k, n, r.size, r.name)
		fmt.Fprintf(&b, "\tabi_str(%s, %s, %s, %s);\n", k, n, cstr(want), r.name)
	case "pointer":
		v, err := parseNumber(r.value)
		if err != nil {
			return fmt.Errorf("value: %w", err)
		}
		fmt.Fprintf(&b, "\tabi_num(%s, %s, \"size\", %s, sizeof(%s));\n", k, n, r.size, r.name)
		fmt.Fprintf(&b, "\tabi_val(%s, %s, %s, %d, %s,\n\t    (unsigned long long) (uintptr_t) (%s));\n",
			k, n, cstr(v.text), b2i(v.signed), v.c, r.name)
	default:
		v, err := parseNumber(r.value)
		if err != nil {
			return fmt.Errorf("value: %w", err)
		}
		fmt.Fprintf(&b, "\tabi_val(%s, %s, %s, %d, %s,\n\t    (unsigned long long) (%s));\n",
			k, n, cstr(v.text), b2i(v.signed), v.c, r.name)
		if r.kind == "const" {
			// A constant's own type: int, unsigned long, ...
			fmt.Fprintf(&b, "\tabi_num(%s, %s, \"size\", %s, sizeof(%s));\n", k, n, r.size, r.name)
			fmt.Fprintf(&b, "\tabi_type(%s, %s, %s,\n\t    __builtin_types_compatible_p(__typeof__(%s), %s));\n",
				k, n, cstr(r.ctype), r.name, r.ctype)
		} else {
			// An enumerator: the size of its enumeration type.
			fmt.Fprintf(&b, "\tabi_num(%s, %s, \"size\", %s, sizeof(%s));\n", k, n, r.size, r.ctype)
		}
	}
	g.check(r, b.String())
	return nil
}

func (g *gen) paramRow(r row) error {
	if _, err := strconv.ParseUint(r.size, 10, 64); err != nil {
		return fmt.Errorf("size: %w", err)
	}
	g.check(r, fmt.Sprintf("\tabi_num(%s, %s, \"size\", %s, sizeof(%s));\n",
		cstr(r.kind), cstr(label(r)), r.size, r.ctype))
	return nil
}

// declarator renders "RET (P1, P2)" as a declaration of name with that
// function type, with a pointer declarator if ptr is set.
func declarator(ctype, name string, ptr bool) (string, error) {
	ret, params, err := funcType(ctype)
	if err != nil {
		return "", err
	}
	plist := "void"
	if len(params) > 0 {
		plist = strings.Join(params, ", ")
	}
	if ptr {
		return fmt.Sprintf("%s (*%s)(%s)", ret, name, plist), nil
	}
	return fmt.Sprintf("%s %s(%s)", ret, name, plist), nil
}

func (g *gen) funcRow(r row) error {
	ptr, err := declarator(r.ctype, "abi_fp", true)
	if err != nil {
		return err
	}
	ftype, _ := declarator(r.ctype, "", false)
	fmt.Fprintf(&g.top, "_Static_assert(__builtin_types_compatible_p(__typeof__(%s),\n    %s),\n    %s);\n",
		r.name, ftype, cstr("func "+r.name+": prototype differs from the table: "+r.ctype))
	// The assignment sits in sizeof: checked by the compiler, never
	// evaluated, so the program does not need the library.
	fmt.Fprintf(&g.ct, "\t{\n\t\t%s = 0;\n\t\t(void) sizeof(abi_fp = %s);\n\t\t(void) abi_fp;\n\t}\n", ptr, r.name)
	g.check(r, "\t/* checked at compile time */\n")
	return nil
}

func (g *gen) functypeRow(r row) error {
	q, err := declarator(r.ctype, "abi_q", true)
	if err != nil {
		return err
	}
	pt, _ := declarator(r.ctype, "", true)
	fmt.Fprintf(&g.top, "_Static_assert(__builtin_types_compatible_p(%s,\n    %s),\n    %s);\n",
		r.name, pt, cstr("functype "+r.name+": differs from the table: "+r.ctype))
	fmt.Fprintf(&g.ct, "\t{\n\t\t%s abi_p = 0;\n\t\t%s = 0;\n\t\t(void) sizeof(abi_p = abi_q);\n\t\t(void) sizeof(abi_q = abi_p);\n\t\t(void) abi_p;\n\t\t(void) abi_q;\n\t}\n",
		r.name, q)
	g.check(r, "\t/* checked at compile time */\n")
	return nil
}

// fakeProvider emits a recorder function per dispatch slot and a fake
// object whose first word points at a table of them, so that redirection
// macros can be run and must land in the slot they name.
func (g *gen) fakeProvider() error {
	if len(g.slots) == 0 {
		return nil
	}
	table := g.slots[0].parent
	var names []string
	for i, s := range g.slots {
		names = append(names, cstr(s.name))
		ft, ok := g.ftypes[s.ctype]
		if !ok {
			continue // no prototype known: the slot is not installed
		}
		ret, params, err := funcType(ft.ctype)
		if err != nil {
			return fmt.Errorf("functype %s: %w", ft.name, err)
		}
		var decl, use []string
		for j, p := range params {
			decl = append(decl, fmt.Sprintf("__typeof__(%s) p%d", p, j))
			use = append(use, fmt.Sprintf("(void) p%d;", j))
		}
		if len(decl) == 0 {
			decl = []string{"void"}
		}
		fmt.Fprintf(&g.top, "static %s abi_slot_%d(%s)\n{\n\t%s\n\tabi_last_slot = %d;\n",
			ret, i, strings.Join(decl, ", "), strings.Join(use, " "), i)
		if ret != "void" {
			fmt.Fprintf(&g.top, "\treturn (%s) (0x5100 + %d);\n", ret, i)
		}
		g.top.WriteString("}\n")
		fmt.Fprintf(&g.setup, "\tabi_provider.%s = abi_slot_%d;\n", s.name, i)
	}
	fmt.Fprintf(&g.top, "static const char *const abi_slot_names[] = {\n\t%s\n};\n",
		strings.Join(names, ",\n\t"))
	fmt.Fprintf(&g.top, "static %s abi_provider;\n", table)
	fmt.Fprintf(&g.top, "static struct { %s *provider; } abi_object = { &abi_provider };\n", table)
	g.top.WriteString("#define ABI_HANDLE ((void *) &abi_object)\n\n")
	return nil
}

// redirectionHeader reports whether a macro row belongs to a dispatch header.
func redirectionHeader(parent string) bool {
	return strings.HasSuffix(parent, "redirection.h")
}

func (g *gen) macroRow(r row) error {
	k, n := cstr(r.kind), cstr(r.name)
	if args, ok := macroArgs(r.ctype); ok {
		return g.functionMacro(r, args)
	}
	if target, ok := strings.CutPrefix(r.ctype, "alias of "); ok {
		return g.aliasRow(r, strings.TrimSpace(target))
	}
	// Other macros: a value of a described struct type named T_NULL is
	// checked to be an all-zero T.
	if base, ok := strings.CutSuffix(r.name, "_NULL"); ok {
		if t, ok := g.find(base, "struct", "type"); ok {
			id := g.id()
			g.check(r, fmt.Sprintf("\t{\n\t\t%[1]s abi_v%[2]d = %[3]s;\n\t\tstatic const %[1]s abi_zero%[2]d;\n\t\tabi_type(%[4]s, %[5]s, %[6]s,\n\t\t    __builtin_types_compatible_p(__typeof__(%[3]s), %[1]s));\n\t\tabi_num(%[4]s, %[5]s, \"nonzero bytes\", 0,\n\t\t    memcmp(&abi_v%[2]d, &abi_zero%[2]d, sizeof abi_v%[2]d) != 0);\n\t}\n",
				t.name, id, r.name, k, n, cstr(t.name)))
			return nil
		}
	}
	g.skip(r, r.ctype)
	return nil
}

// aliasRow checks a macro the table describes as an alias of another name:
// it must be a macro whose expansion is that name, and mean the same thing
// (the same value, type, or member at the same offset of every struct that
// has it). A target the table does not describe (an entry point, or a name
// the reference headers do not define either) is checked by its expansion
// alone.
func (g *gen) aliasRow(r row, target string) error {
	k, n := cstr(r.kind), cstr(r.name)
	if !isIdent(target) {
		g.skip(r, "alias target is not an identifier")
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#ifndef %s\n\tabi_fail(%s, %s, \"a macro\", \"no macro of that name\");\n#else\n", r.name, k, n)
	text := fmt.Sprintf("\tabi_str(%s, %s, %s, ABI_STR(%s));\n", k, n, cstr(target), r.name)
	rows := g.byName[target]
	switch {
	case len(rows) == 0:
		b.WriteString(text)
	case rows[0].kind == "const" || rows[0].kind == "enum":
		// The target may itself be a macro: compare values, not text.
		fmt.Fprintf(&b, "\tabi_val(%s, %s, %s, 0, (unsigned long long) (%s),\n\t    (unsigned long long) (%s));\n",
			k, n, cstr(target), target, r.name)
	case rows[0].kind == "type" || rows[0].kind == "struct":
		b.WriteString(text)
		fmt.Fprintf(&b, "\tabi_type(%s, %s, %s,\n\t    __builtin_types_compatible_p(%s, %s));\n",
			k, n, cstr(target), r.name, target)
	default:
		members := 0
		for _, t := range rows {
			if t.kind != "field" && t.kind != "slot" {
				continue
			}
			members++
			fmt.Fprintf(&b, "\tabi_num(%s, %s, %s, offsetof(%s, %s),\n\t    offsetof(%s, %s));\n",
				k, n, cstr("offset in "+t.parent), t.parent, target, t.parent, r.name)
		}
		if members == 0 {
			g.skip(r, "alias of a "+rows[0].kind)
			return nil
		}
		b.WriteString(text)
	}
	b.WriteString("#endif\n")
	g.check(r, b.String())
	return nil
}

func (g *gen) functionMacro(r row, args []string) error {
	k, n := cstr(r.kind), cstr(r.name)
	switch r.name {
	case "DAT_HANDLE_TO_PROVIDER":
		if len(g.slots) == 0 || len(args) != 1 {
			break
		}
		g.check(r, fmt.Sprintf("\tabi_num(%s, %s, \"points at the table\", 1,\n\t    (void *) %s(ABI_HANDLE) == (void *) &abi_provider);\n",
			k, n, r.name))
		return nil
	case "DAT_GET_TYPE", "DAT_GET_SUBTYPE", "DAT_IS_WARNING":
		if ok := g.statusMacro(r); ok {
			return nil
		}
	}
	if redirectionHeader(r.parent) {
		slot := strings.ToLower(strings.TrimPrefix(r.name, "DAT_")) + "_func"
		i, ok := g.slotIdx[slot]
		if !ok {
			g.skip(r, "no slot "+slot+" in the table")
			return nil
		}
		ft, ok := g.ftypes[g.slots[i].ctype]
		if !ok {
			g.skip(r, "no prototype for slot type "+g.slots[i].ctype)
			return nil
		}
		ret, params, err := funcType(ft.ctype)
		if err != nil {
			return err
		}
		if len(params) != len(args) {
			g.skip(r, fmt.Sprintf("table gives %d macro arguments but %d slot parameters", len(args), len(params)))
			return nil
		}
		id := g.id()
		call := []string{"ABI_HANDLE"}
		for j := 1; j < len(params); j++ {
			fmt.Fprintf(&g.top, "static __typeof__(%s) abi_m%d_a%d;\n", params[j], id, j)
			call = append(call, fmt.Sprintf("abi_m%d_a%d", id, j))
		}
		var b strings.Builder
		b.WriteString("\tabi_last_slot = -1;\n")
		if ret == "void" {
			fmt.Fprintf(&b, "\t%s(%s);\n", r.name, strings.Join(call, ", "))
		} else {
			fmt.Fprintf(&b, "\tabi_num(%s, %s, \"result\", 0x5100 + %d,\n\t    (unsigned long long) %s(%s));\n",
				k, n, i, r.name, strings.Join(call, ", "))
		}
		fmt.Fprintf(&b, "\tabi_slot(%s, %s, %d);\n", k, n, i)
		g.check(r, b.String())
		return nil
	}
	// A consumer macro standing for a function of the same name in capitals
	// (dat_ia_open -> DAT_IA_OPEN_FUNC): its arguments and result must
	// have that function's types.  Checked at compile time, unevaluated.
	if ft, ok := g.ftypes[strings.ToUpper(r.name)+"_FUNC"]; ok {
		ret, params, err := funcType(ft.ctype)
		if err != nil {
			return err
		}
		if len(params) == len(args) {
			id := g.id()
			var call []string
			for j, p := range params {
				fmt.Fprintf(&g.top, "extern __typeof__(%s) abi_x%d_a%d;\n", p, id, j)
				call = append(call, fmt.Sprintf("abi_x%d_a%d", id, j))
			}
			fmt.Fprintf(&g.top, "_Static_assert(__builtin_types_compatible_p(\n    __typeof__(%s(%s)), %s),\n    %s);\n",
				r.name, strings.Join(call, ", "), ret, cstr("macro "+r.name+": does not behave as "+ft.name))
			g.check(r, "\t/* checked at compile time */\n")
			return nil
		}
	}
	g.skip(r, "function-like macro with no described meaning")
	return nil
}

// statusMacro checks DAT_GET_TYPE, DAT_GET_SUBTYPE and DAT_IS_WARNING on
// sample return codes, using the masks and class bits from the table.
func (g *gen) statusMacro(r row) bool {
	val := func(name string) (uint64, bool) {
		c, ok := g.find(name, "const")
		if !ok {
			return 0, false
		}
		v, err := strconv.ParseUint(c.value, 0, 64)
		return v, err == nil
	}
	samples := []uint64{0x0, 0x8005000c, 0x40060024, 0x000d0000, 0xffff0000, 0x80140065}
	k, n := cstr(r.kind), cstr(r.name)
	var b strings.Builder
	switch r.name {
	case "DAT_GET_TYPE", "DAT_GET_SUBTYPE":
		maskName := "DAT_TYPE_MASK"
		if r.name == "DAT_GET_SUBTYPE" {
			maskName = "DAT_SUBTYPE_MASK"
		}
		mask, ok := val(maskName)
		if !ok {
			return false
		}
		for _, s := range samples {
			fmt.Fprintf(&b, "\tabi_num(%s, %s, %s, 0x%x,\n\t    (unsigned long long) %s(0x%xU));\n",
				k, n, cstr(fmt.Sprintf("value for 0x%x", s)), s&mask, r.name, s)
		}
	case "DAT_IS_WARNING":
		warn, ok := val("DAT_CLASS_WARNING")
		if !ok {
			return false
		}
		for _, s := range samples {
			want := 0
			if s&warn != 0 {
				want = 1
			}
			fmt.Fprintf(&b, "\tabi_num(%s, %s, %s, %d,\n\t    %s(0x%xU) != 0);\n",
				k, n, cstr(fmt.Sprintf("truth for 0x%x", s)), want, r.name, s)
		}
	}
	g.check(r, b.String())
	return true
}

func (g *gen) program(source string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `/*
 * Generated by ctest/abigen from %s: do not edit.
 * Checks the DAT headers against every row of the layout table.
 */
#define _DEFAULT_SOURCE 1	/* u_int32_t and friends, named by the table */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <dat/udat.h>
#include <dat/dat_registry.h>
#include <dat/dat_redirection.h>
#include <dat/udat_redirection.h>

#define ABI_STR_(x)	#x
#define ABI_STR(x)	ABI_STR_(x)

/* Not every table needs every helper. */
#define ABI_HELPER	static __attribute__((unused)) void

static unsigned long abi_checked, abi_failed, abi_skipped;
static int abi_row_ok;
static int abi_last_slot = -1;

ABI_HELPER
abi_begin(void)
{
	abi_row_ok = 1;
}

ABI_HELPER
abi_end(void)
{
	abi_checked++;
	if (!abi_row_ok)
		abi_failed++;
}

ABI_HELPER
abi_fail(const char *kind, const char *name, const char *want, const char *got)
{
	abi_row_ok = 0;
	printf("FAIL %%s %%s: expected %%s got %%s\n", kind, name, want, got);
}

ABI_HELPER
abi_num(const char *kind, const char *name, const char *what,
    unsigned long long want, unsigned long long got)
{
	if (want == got)
		return;
	abi_row_ok = 0;
	if (want > 9 || got > 9)
		printf("FAIL %%s %%s: expected %%s %%llu (0x%%llx) got %%llu (0x%%llx)\n",
		    kind, name, what, want, want, got, got);
	else
		printf("FAIL %%s %%s: expected %%s %%llu got %%llu\n", kind, name,
		    what, want, got);
}

ABI_HELPER
abi_val(const char *kind, const char *name, const char *want_text,
    int want_signed, unsigned long long want, unsigned long long got)
{
	if (want == got)
		return;
	abi_row_ok = 0;
	if (want_signed)
		printf("FAIL %%s %%s: expected value %%s got %%lld\n", kind, name,
		    want_text, (long long) got);
	else
		printf("FAIL %%s %%s: expected value %%s got 0x%%llx\n", kind, name,
		    want_text, got);
}

ABI_HELPER
abi_type(const char *kind, const char *name, const char *want, int compatible)
{
	if (compatible)
		return;
	abi_row_ok = 0;
	printf("FAIL %%s %%s: expected type %%s got an incompatible type\n",
	    kind, name, want);
}

ABI_HELPER
abi_str(const char *kind, const char *name, const char *want, const char *got)
{
	if (strcmp(want, got) != 0) {
		abi_row_ok = 0;
		printf("FAIL %%s %%s: expected \"%%s\" got \"%%s\"\n", kind, name,
		    want, got);
	}
}

/* A row the generator cannot check fails the run: every row is checked. */
ABI_HELPER
abi_skip(const char *kind, const char *name, const char *why)
{
	abi_skipped++;
	printf("FAIL %%s %%s: not checked: %%s\n", kind, name, why);
}

`, source)
	b.WriteString(g.top.String())
	if len(g.slots) > 0 {
		b.WriteString(`
ABI_HELPER
abi_slot(const char *kind, const char *name, int want)
{
	if (abi_last_slot == want)
		return;
	abi_row_ok = 0;
	printf("FAIL %s %s: expected slot %s got %s%s\n", kind, name,
	    abi_slot_names[want], abi_last_slot < 0 ? "no slot call" : "slot ",
	    abi_last_slot < 0 ? "" : abi_slot_names[abi_last_slot]);
}
`)
	}
	b.WriteString("\n/* func and functype rows: prototypes, checked by the compiler. */\nstatic void\nabi_compile_time(void)\n{\n")
	b.WriteString(g.ct.String())
	b.WriteString("}\n\nstatic void\nabi_setup(void)\n{\n")
	b.WriteString(g.setup.String())
	b.WriteString("}\n")

	// Run-time checks, in table order, a few hundred rows per function.
	const chunk = 200
	var parts int
	for i := 0; i < len(g.run); i += chunk {
		end := min(i+chunk, len(g.run))
		fmt.Fprintf(&b, "\nstatic void\nabi_rows_%d(void)\n{\n", parts)
		for _, blk := range g.run[i:end] {
			b.WriteString(blk)
		}
		b.WriteString("}\n")
		parts++
	}
	b.WriteString("\nint\nmain(void)\n{\n\tabi_compile_time();\n\tabi_setup();\n")
	for i := 0; i < parts; i++ {
		fmt.Fprintf(&b, "\tabi_rows_%d();\n", i)
	}
	b.WriteString(`	if (abi_skipped > 0)
		printf("%lu rows not checked\n", abi_skipped);
	printf("%lu checked, %lu failed\n", abi_checked, abi_failed);
	return abi_failed > 0 || abi_skipped > 0 ? 1 : 0;
}
`)
	return b.String()
}
