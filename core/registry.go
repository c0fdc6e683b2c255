package core

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxIANameLen bounds IA names as the reference does (DAT_NAME_MAX_LENGTH
// is 256 including the terminating NUL).
const maxIANameLen = 255

// RegistryEntry is one well-formed line of dat.conf. File and Line say where
// it came from so that diagnostics can point the user at it.
type RegistryEntry struct {
	IAName          string
	APIVersion      string // as written, e.g. "u1.2"
	ThreadSafe      bool
	Default         bool
	LibPath         string
	ProviderVersion string
	IAParams        string // provider instance data (7th field)
	PlatformParams  string // platform-specific string (8th field)
	File            string
	Line            int

	APIMajor, APIMinor int
	Kernel             bool // "k" (kernel) entry; user programs never match it
}

// RegistryProblem is a dat.conf line that was skipped, kept so that the
// diagnostic tool can show users why their entry is ignored.
type RegistryProblem struct {
	File string
	Line int
	Why  string
}

// String formats the problem the way compilers do, file:line: why.
func (p RegistryProblem) String() string {
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Why)
}

// ParseRegistry reads dat.conf text. Malformed lines do not stop the parse:
// like the reference, one bad line must not hide every provider, so each is
// skipped, returned as a problem and logged. It never panics.
func ParseRegistry(r io.Reader, file string) (entries []RegistryEntry, problems []RegistryProblem) {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if text != "" {
			e, why, ok := parseRegistryLine(text)
			switch {
			case why != "":
				p := RegistryProblem{File: file, Line: line, Why: why}
				problems = append(problems, p)
				Logf(LevelWarn, "registry: skipping malformed line %s", p)
			case ok:
				e.File, e.Line = file, line
				entries = append(entries, e)
			}
		}
		if err != nil {
			if err != io.EOF {
				p := RegistryProblem{File: file, Line: line, Why: "read error: " + err.Error()}
				problems = append(problems, p)
				Logf(LevelWarn, "registry: %s", p)
			}
			return entries, problems
		}
	}
}

// parseRegistryLine returns ok=false with no reason for blank and comment
// lines, and a reason for malformed ones.
func parseRegistryLine(text string) (e RegistryEntry, why string, ok bool) {
	text = strings.TrimSuffix(text, "\n")
	text = strings.TrimSuffix(text, "\r")
	f, why := splitFields(text)
	switch {
	case why != "":
		return e, why, false
	case len(f) == 0:
		return e, "", false
	case len(f) != 8:
		return e, fmt.Sprintf("%d fields, want 8", len(f)), false
	}
	e = RegistryEntry{IAName: f[0], APIVersion: f[1], LibPath: f[4],
		ProviderVersion: f[5], IAParams: f[6], PlatformParams: f[7]}
	switch {
	case e.IAName == "":
		return e, "empty IA name", false
	case len(e.IAName) > maxIANameLen:
		return e, fmt.Sprintf("IA name is %d bytes, at most %d allowed", len(e.IAName), maxIANameLen), false
	}
	var vok bool
	if e.Kernel, e.APIMajor, e.APIMinor, vok = parseAPIVersion(e.APIVersion); !vok {
		return e, fmt.Sprintf("API version %s is not u<major>.<minor> or k<major>.<minor>", clip(e.APIVersion)), false
	}
	switch f[2] {
	case "threadsafe":
		e.ThreadSafe = true
	case "nonthreadsafe":
	default:
		return e, fmt.Sprintf("thread safety %s is not threadsafe or nonthreadsafe", clip(f[2])), false
	}
	switch f[3] {
	case "default":
		e.Default = true
	case "nondefault":
	default:
		return e, fmt.Sprintf("%s is not default or nondefault", clip(f[3])), false
	}
	return e, "", true
}

// splitFields splits on blanks outside double quotes, drops the quotes and
// stops at a '#' outside quotes. A quoted run joins the field it touches
// (a"b c"d is one field, ab cd), and "" alone is an empty field.
func splitFields(s string) ([]string, string) {
	var fields []string
	var cur strings.Builder
	inField, inQuote := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQuote, inField = !inQuote, true
		case inQuote:
			cur.WriteByte(c)
		case c == '#':
			i = len(s)
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			if inField {
				fields = append(fields, cur.String())
				cur.Reset()
				inField = false
			}
		default:
			cur.WriteByte(c)
			inField = true
		}
	}
	if inQuote {
		return nil, "unterminated double quote"
	}
	if inField {
		fields = append(fields, cur.String())
	}
	return fields, ""
}

// parseAPIVersion accepts exactly [uk]<digits>.<digits>.
func parseAPIVersion(v string) (kernel bool, major, minor int, ok bool) {
	if len(v) < 4 || (v[0] != 'u' && v[0] != 'k') {
		return false, 0, 0, false
	}
	ma, mi, found := strings.Cut(v[1:], ".")
	if !found || !allDigits(ma) || !allDigits(mi) {
		return false, 0, 0, false
	}
	major, err1 := strconv.Atoi(ma)
	minor, err2 := strconv.Atoi(mi)
	if err1 != nil || err2 != nil {
		return false, 0, 0, false
	}
	return v[0] == 'k', major, minor, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// clip quotes a field for a log line without echoing a huge one.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// RegistryPaths is the dat.conf search order. DAT_OVERRIDE replaces it
// entirely, as in the reference, so a user can test a private registry.
func RegistryPaths(sysconfdir string) []string {
	if p := Getenv("DAT_OVERRIDE"); p != "" {
		return []string{p}
	}
	var paths []string
	if sysconfdir != "" {
		paths = append(paths, filepath.Join(sysconfdir, "dat.conf"))
	}
	if len(paths) == 0 || paths[0] != "/etc/dat.conf" {
		paths = append(paths, "/etc/dat.conf")
	}
	return paths
}

// Registry is a parsed static registry. It is immutable once loaded, so it
// may be shared between goroutines.
type Registry struct {
	path     string
	entries  []RegistryEntry
	problems []RegistryProblem
}

// LoadRegistry reads the first file of paths that exists; only that one is
// read, as the reference does. No file, or an unreadable one (logged), gives
// an empty registry rather than an error, so that dat_ia_open reports the
// name as not registered. The error result is currently always nil.
//
// datinfo (tools/datinfo) learns which file the library reads, and why,
// from the debug lines "registry: search path P" (one per candidate, in
// order) and "registry: reading P", and the malformed lines from the warn
// line "registry: skipping malformed line P:N: why": keep their wording
// (ctest/test_datinfo.c checks it).
func LoadRegistry(paths []string) (*Registry, error) {
	for _, p := range paths {
		Logf(LevelDebug, "registry: search path %s", p)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			Logf(LevelWarn, "registry: cannot read %s: %v; using an empty registry", p, err)
			return &Registry{path: p}, nil
		}
		Logf(LevelDebug, "registry: reading %s", p)
		r := &Registry{path: p}
		r.entries, r.problems = ParseRegistry(bytes.NewReader(data), p)
		return r, nil
	}
	Logf(LevelDebug, "registry: none of %q exists; using an empty registry", paths)
	return &Registry{}, nil
}

// Lookup finds the entry a program of DAT version major.minor opens by
// name: user entries of exactly that version, first line wins. A miss is
// ErrNameNotRegistered, which is what dat_ia_openv reports.
func (r *Registry) Lookup(name string, major, minor int) (RegistryEntry, error) {
	if r == nil {
		return RegistryEntry{}, ErrNameNotRegistered
	}
	var other []string
	for _, e := range r.entries {
		if e.IAName != name {
			continue
		}
		if !e.Kernel && e.APIMajor == major && e.APIMinor == minor {
			return e, nil
		}
		other = append(other, fmt.Sprintf("%s at %s:%d", e.APIVersion, e.File, e.Line))
	}
	var why error
	if len(other) > 0 {
		why = fmt.Errorf("registry: %q has no u%d.%d entry, only %s", name, major, minor, strings.Join(other, ", "))
		Logf(LevelInfo, "%v", why)
	} else {
		why = fmt.Errorf("registry: %q is not in %q", name, r.path)
	}
	return RegistryEntry{}, Because(ErrNameNotRegistered, why)
}

// Entries returns a copy of the well-formed entries in file order, for
// dat_registry_list_providers and the diagnostic tool.
func (r *Registry) Entries() []RegistryEntry {
	if r == nil {
		return nil
	}
	return append([]RegistryEntry(nil), r.entries...)
}

// Problems returns a copy of the skipped lines, for the diagnostic tool.
func (r *Registry) Problems() []RegistryProblem {
	if r == nil {
		return nil
	}
	return append([]RegistryProblem(nil), r.problems...)
}

// Path is the file the registry was read from, "" when none existed.
func (r *Registry) Path() string {
	if r == nil {
		return ""
	}
	return r.path
}

// ParseIAParams splits the provider instance data of a godat entry,
// "key=value,key=value" with no blanks. It checks syntax only; the provider
// decides which keys and values it accepts.
func ParseIAParams(s string) (map[string]string, error) {
	params := map[string]string{}
	if s == "" {
		return params, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		switch {
		case !ok || k == "" || v == "":
			return nil, fmt.Errorf("IA params %q: %q is not key=value", s, pair)
		case strings.ContainsAny(pair, " \t\r\n\v\f"):
			return nil, fmt.Errorf("IA params %q: %q contains a blank", s, pair)
		}
		if _, dup := params[k]; dup {
			return nil, fmt.Errorf("IA params %q: key %q given twice", s, k)
		}
		params[k] = v
	}
	return params, nil
}
