// Command coverage checks ctest/COVERAGE.md, the table that maps every
// RETURN VALUES entry of every DAT man page to the C test case that provokes
// it, or to the reason no program can provoke it.
//
// Usage:
//
//	coverage -extract MANDIR > retvals.tsv   # list page and return value rows
//	coverage -check retvals.tsv COVERAGE.md CTESTDIR
//
// The page list (retvals.tsv) is kept in the repository so the check needs
// no copy of the man pages. A table row is
//
//	| page | RETURN_VALUE | test_page.c:case_name |
//	| page | RETURN_VALUE | unprovokable: why |
//
// and a case must be a function of that file listed in a cmocka test array
// (cmocka_unit_test(case_name) or a _setup/_teardown variant). -check fails
// when a page or return value has no row, a row names no known page or
// value, or a named case does not exist; it prints the totals.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	extract := flag.String("extract", "", "man page directory to extract return values from")
	check := flag.Bool("check", false, "check COVERAGE.md against retvals.tsv and the test sources")
	flag.Parse()
	switch {
	case *extract != "":
		if err := extractAll(*extract, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "coverage:", err)
			os.Exit(1)
		}
	case *check && flag.NArg() == 3:
		os.Exit(checkAll(flag.Arg(0), flag.Arg(1), flag.Arg(2), os.Stdout))
	default:
		fmt.Fprintln(os.Stderr, "usage: coverage -extract MANDIR | coverage -check retvals.tsv COVERAGE.md CTESTDIR")
		os.Exit(2)
	}
}

// A return value entry in a man page's RETURN VALUES section starts with a
// bold code name: \fB\fBDAT_SUCCESS\fR\fR.
var retvalLine = regexp.MustCompile(`^\\fB\\fB(DAT_[A-Z_]+)`)

// extractAll writes "page<TAB>value" for every RETURN VALUES entry, and
// "page<TAB>(none)" for a page without one (its row gives the reason).
func extractAll(dir string, w io.Writer) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.3dat"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no *.3dat pages in %s", dir)
	}
	for _, f := range files {
		vals, err := pageRetvals(f)
		if err != nil {
			return err
		}
		page := strings.TrimSuffix(filepath.Base(f), ".3dat")
		if len(vals) == 0 {
			fmt.Fprintf(w, "%s\t(none)\n", page)
		}
		for _, v := range vals {
			fmt.Fprintf(w, "%s\t%s\n", page, v)
		}
	}
	return nil
}

func pageRetvals(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var vals []string
	seen := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, ".SH ") {
			in = strings.HasPrefix(line, ".SH RETURN VALUES")
			continue
		}
		if m := retvalLine.FindStringSubmatch(line); in && m != nil && !seen[m[1]] {
			seen[m[1]] = true
			vals = append(vals, m[1])
		}
	}
	return vals, sc.Err()
}

type key struct{ page, value string }

// checkAll returns the exit status.
func checkAll(tsv, table, ctestDir string, w io.Writer) int {
	want, order, err := readRetvals(tsv)
	if err != nil {
		fmt.Fprintln(w, "coverage:", err)
		return 1
	}
	rows, err := readTable(table)
	if err != nil {
		fmt.Fprintln(w, "coverage:", err)
		return 1
	}
	bad := 0
	cases, unprovokable := 0, 0
	got := map[key]bool{}
	sources := map[string]string{}
	for _, r := range rows {
		k := key{r.page, r.value}
		if !want[k] {
			fmt.Fprintf(w, "FAIL line %d: %s %s is not a return value of that page\n", r.line, r.page, r.value)
			bad++
			continue
		}
		if got[k] {
			fmt.Fprintf(w, "FAIL line %d: %s %s listed twice\n", r.line, r.page, r.value)
			bad++
			continue
		}
		got[k] = true
		if reason, ok := strings.CutPrefix(r.cell, "unprovokable:"); ok {
			if strings.TrimSpace(reason) == "" {
				fmt.Fprintf(w, "FAIL line %d: %s %s: unprovokable needs a reason\n", r.line, r.page, r.value)
				bad++
			}
			unprovokable++
			continue
		}
		if err := caseExists(ctestDir, r.cell, sources); err != nil {
			fmt.Fprintf(w, "FAIL line %d: %s %s: %v\n", r.line, r.page, r.value, err)
			bad++
			continue
		}
		cases++
	}
	pages := map[string]bool{}
	for _, k := range order {
		pages[k.page] = true
		if !got[k] {
			fmt.Fprintf(w, "FAIL missing row: %s %s\n", k.page, k.value)
			bad++
		}
	}
	total := len(order)
	fmt.Fprintf(w, "coverage: %d pages, %d return values: %d with a test case, %d unprovokable (%.1f%%), %d problems\n",
		len(pages), total, cases, unprovokable, 100*float64(unprovokable)/float64(max(total, 1)), bad)
	if bad > 0 {
		return 1
	}
	return 0
}

func readRetvals(path string) (map[key]bool, []key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	want := map[key]bool{}
	var order []key
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		page, value, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, nil, fmt.Errorf("%s:%d: want page<TAB>value", path, i+1)
		}
		k := key{page, value}
		want[k] = true
		order = append(order, k)
	}
	return want, order, nil
}

type row struct {
	line              int
	page, value, cell string
}

// readTable reads the markdown table rows of COVERAGE.md whose first cell
// names a dat_ page.
func readTable(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "| dat_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			return nil, fmt.Errorf("%s:%d: want 3 cells, got %d", path, n, len(cells))
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		rows = append(rows, row{n, cells[0], cells[1], cells[2]})
	}
	return rows, sc.Err()
}

var caseCell = regexp.MustCompile(`^(test_[a-z0-9_]+\.c):([A-Za-z0-9_]+)$`)

// caseExists checks that cell names a cmocka test case of a ctest file.
func caseExists(dir, cell string, sources map[string]string) error {
	m := caseCell.FindStringSubmatch(cell)
	if m == nil {
		return fmt.Errorf("case %q: want test_file.c:case_name or unprovokable: reason", cell)
	}
	src, ok := sources[m[1]]
	if !ok {
		b, err := os.ReadFile(filepath.Join(dir, m[1]))
		if err != nil {
			return fmt.Errorf("case %q: %v", cell, err)
		}
		src = string(b)
		sources[m[1]] = src
	}
	listed := regexp.MustCompile(`cmocka_unit_test(_setup|_teardown|_setup_teardown|_prestate)?\(\s*` + m[2] + `\b`)
	defined := regexp.MustCompile(`(?m)^static void\s+` + m[2] + `\s*\(`)
	if !defined.MatchString(src) || !listed.MatchString(src) {
		return fmt.Errorf("case %q: no cmocka test %s in %s", cell, m[2], m[1])
	}
	return nil
}
