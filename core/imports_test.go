package core

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The layering rules of DESIGN.md: imports point down only. core never
// imports cgo, unsafe, the export layer or a concrete backend; backends
// never import core; unsafe lives only in export/ and *_unsafe.go files of
// the backends; the export layer's shared package (export/cabi) imports no
// ABI package.
func TestImportBoundaries(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "build" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if msg := violation(dir, filepath.Base(rel), p); msg != "" {
				t.Errorf("%s imports %s: %s", rel, p, msg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func violation(dir, file, imp string) string {
	switch {
	case dir == "core" && (imp == "C" || imp == "unsafe"):
		return "core is pure Go"
	case dir == "core" && (isExport(imp) || strings.HasPrefix(imp, "godat/rdma/")):
		return "core must not depend on the export layer or a concrete backend"
	case strings.HasPrefix(dir, "rdma") && (imp == "godat/core" || isExport(imp)):
		return "backends never import core or export"
	case dir == "export/cabi" && isExport(imp):
		return "cabi is shared by every ABI's library and depends on none"
	case strings.HasPrefix(dir, "rdma") && imp == "unsafe" && !strings.HasSuffix(file, "_unsafe.go") && !strings.HasSuffix(file, "_unsafe_test.go"):
		return "unsafe belongs in *_unsafe.go files"
	}
	return ""
}

func isExport(imp string) bool {
	return imp == "godat/export" || strings.HasPrefix(imp, "godat/export/")
}
