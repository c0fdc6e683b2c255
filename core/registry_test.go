package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func parseFile(t *testing.T, name string) ([]RegistryEntry, []RegistryProblem) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "registry", name))
	require.NoError(t, err)
	defer f.Close()
	return ParseRegistry(f, name)
}

func names(entries []RegistryEntry) []string {
	var n []string
	for _, e := range entries {
		n = append(n, e.IAName)
	}
	return n
}

func TestRegistryParseValid(t *testing.T) {
	entries, problems := parseFile(t, "valid.conf")
	require.Empty(t, problems)
	require.Equal(t, []string{"plain", "tabbed", "quoted-spaces", "with-comment",
		"hash-in-quotes", "dup", "dup", "v2", "kernel"}, names(entries))

	require.Equal(t, RegistryEntry{IAName: "plain", APIVersion: "u1.2", ThreadSafe: true,
		Default: true, LibPath: "libplain.so.1", ProviderVersion: "p.1.0",
		File: "valid.conf", Line: 4, APIMajor: 1, APIMinor: 2}, entries[0])

	tab := entries[1]
	require.False(t, tab.ThreadSafe)
	require.False(t, tab.Default)
	require.Equal(t, "a=b", tab.IAParams)
	require.Equal(t, "x", tab.PlatformParams)

	require.Equal(t, "/opt/my lib/libq.so", entries[2].LibPath)
	require.Equal(t, "ib0 0", entries[2].IAParams)
	require.Equal(t, "", entries[3].PlatformParams)
	require.Equal(t, "a#b", entries[4].IAParams)
	require.Equal(t, "#", entries[4].PlatformParams)

	require.Equal(t, 2, entries[7].APIMajor)
	require.True(t, entries[8].Kernel)
	require.Equal(t, 1, entries[8].APIMajor)
}

func TestRegistryParseCRLF(t *testing.T) {
	entries, problems := parseFile(t, "crlf.conf")
	require.Empty(t, problems)
	require.Equal(t, []string{"crlf", "crlf2"}, names(entries))
	require.Equal(t, "", entries[0].PlatformParams)
	require.Equal(t, "q", entries[1].PlatformParams)
	require.Equal(t, 4, entries[1].Line)
}

func TestRegistryParseMalformed(t *testing.T) {
	buf := captureLog(t, LevelWarn)
	entries, problems := parseFile(t, "malformed.conf")
	require.Equal(t, []string{"good1", "good2"}, names(entries))
	require.Equal(t, 9, entries[1].Line)

	want := []struct {
		line int
		why  string
	}{
		{2, "7 fields, want 8"},
		{3, "9 fields, want 8"},
		{4, `API version "1.2" is not`},
		{5, `API version "u1.x" is not`},
		{6, `thread safety "safe"`},
		{7, `"maybe" is not default or nondefault`},
		{8, "unterminated double quote"},
	}
	require.Len(t, problems, len(want))
	for i, w := range want {
		require.Equal(t, "malformed.conf", problems[i].File)
		require.Equal(t, w.line, problems[i].Line)
		require.Contains(t, problems[i].Why, w.why)
		require.Contains(t, buf.String(), "godat: warn: registry: skipping malformed line "+problems[i].String())
	}
}

func TestRegistryParseEdgeCases(t *testing.T) {
	cases := []struct {
		name, text string
		ok         bool
	}{
		{"empty fields", `a u1.2 threadsafe default "" "" "" ""`, true},
		{"quote joins word", `a u1.2 threadsafe default lib"x y"z v "" ""`, true},
		{"comment mid word", `a u1.2 threadsafe default lib v ""#"" ""`, false},
		{"only blanks", " \t \r", false},
		{"empty name", `"" u1.2 threadsafe default l v "" ""`, false},
		{"name 255", strings.Repeat("n", 255) + ` u1.2 threadsafe default l v "" ""`, true},
		{"name 256", strings.Repeat("n", 256) + ` u1.2 threadsafe default l v "" ""`, false},
		{"version overflow", `a u99999999999999999999.2 threadsafe default l v "" ""`, false},
		{"version sign", `a u+1.2 threadsafe default l v "" ""`, false},
		{"version extra dot", `a u1.2.3 threadsafe default l v "" ""`, false},
		{"version case", `a U1.2 threadsafe default l v "" ""`, false},
		{"safety case", `a u1.2 ThreadSafe default l v "" ""`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, _ := ParseRegistry(strings.NewReader(c.text), "x")
			require.Equal(t, c.ok, len(entries) == 1)
		})
	}
	entries, _ := ParseRegistry(strings.NewReader(`a u1.2 threadsafe default lib"x y"z v "" ""`), "x")
	require.Equal(t, "libx yz", entries[0].LibPath)
}

func TestRegistryParseLongLine(t *testing.T) {
	long := strings.Repeat("k=v,", 25_000) + "end=1"
	text := "# before\nbig u1.2 threadsafe default lib v \"" + long + "\" \"\"\nafter u1.2 threadsafe default lib v \"\" \"\"\n" +
		strings.Repeat("N", 100_000) + " u1.2 threadsafe default lib v \"\" \"\"\n"
	entries, problems := ParseRegistry(strings.NewReader(text), "long")
	require.Equal(t, []string{"big", "after"}, names(entries))
	require.Equal(t, long, entries[0].IAParams)
	require.Len(t, problems, 1)
	require.Equal(t, 4, problems[0].Line)
	require.Less(t, len(problems[0].Why), 100, "the reason must not echo the line")
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		f.n++
		return copy(p, "a u1.2 threadsafe default l v \"\" \"\"\nb"), nil
	}
	return 0, os.ErrPermission
}

func TestRegistryParseReadError(t *testing.T) {
	entries, problems := ParseRegistry(&failingReader{}, "r")
	require.Equal(t, []string{"a"}, names(entries))
	require.Len(t, problems, 2) // the truncated "b" line and the read error
	require.Contains(t, problems[1].Why, "read error")
}

func TestRegistryLookup(t *testing.T) {
	reg, err := LoadRegistry([]string{filepath.Join("testdata", "registry", "valid.conf")})
	require.NoError(t, err)

	e, err := reg.Lookup("dup", 1, 2)
	require.NoError(t, err)
	require.Equal(t, "libfirst.so.1", e.LibPath, "first matching line wins")

	_, err = reg.Lookup("v2", 1, 2)
	require.ErrorIs(t, err, ErrNameNotRegistered, "u2.0 is not for a 1.2 program")
	e, err = reg.Lookup("v2", 2, 0)
	require.NoError(t, err)
	require.Equal(t, "libv2.so.2", e.LibPath)

	_, err = reg.Lookup("kernel", 1, 2)
	require.ErrorIs(t, err, ErrNameNotRegistered, "k1.2 is not for user programs")

	_, err = reg.Lookup("nosuch", 1, 2)
	require.Equal(t, ErrNameNotRegistered, err)
	_, err = reg.Lookup("Plain", 1, 2)
	require.ErrorIs(t, err, ErrNameNotRegistered, "names are case-sensitive")

	all := reg.Entries()
	require.Len(t, all, 9)
	all[0].IAName = "changed"
	require.Equal(t, "plain", reg.Entries()[0].IAName, "Entries returns a copy")

	var nilReg *Registry
	_, err = nilReg.Lookup("plain", 1, 2)
	require.ErrorIs(t, err, ErrNameNotRegistered)
	require.Nil(t, nilReg.Entries())
}

func TestRegistryPathsOverride(t *testing.T) {
	t.Setenv("DAT_OVERRIDE", "")
	require.Equal(t, []string{"/usr/local/etc/dat.conf", "/etc/dat.conf"}, RegistryPaths("/usr/local/etc"))
	require.Equal(t, []string{"/etc/dat.conf"}, RegistryPaths(""))
	require.Equal(t, []string{"/etc/dat.conf"}, RegistryPaths("/etc"))

	t.Setenv("DAT_OVERRIDE", "/tmp/my.conf")
	require.Equal(t, []string{"/tmp/my.conf"}, RegistryPaths("/usr/local/etc"))
}

func TestRegistryLoadFirstExisting(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first.conf")
	second := filepath.Join(dir, "second.conf")
	require.NoError(t, os.WriteFile(first, []byte("one u1.2 threadsafe default l v \"\" \"\"\n"), 0o644))
	require.NoError(t, os.WriteFile(second, []byte("two u1.2 threadsafe default l v \"\" \"\"\n"), 0o644))

	reg, err := LoadRegistry([]string{filepath.Join(dir, "missing.conf"), first, second})
	require.NoError(t, err)
	require.Equal(t, first, reg.Path())
	require.Equal(t, []string{"one"}, names(reg.Entries()), "only one file is read")

	t.Setenv("DAT_OVERRIDE", second)
	reg, err = LoadRegistry(RegistryPaths(dir))
	require.NoError(t, err)
	require.Equal(t, []string{"two"}, names(reg.Entries()))

	t.Setenv("DAT_OVERRIDE", filepath.Join(dir, "missing.conf"))
	reg, err = LoadRegistry(RegistryPaths(dir))
	require.NoError(t, err, "a missing override is an empty registry")
	require.Empty(t, reg.Entries())
	require.Equal(t, "", reg.Path())
	_, err = reg.Lookup("one", 1, 2)
	require.ErrorIs(t, err, ErrNameNotRegistered)
}

func TestRegistryLoadUnreadable(t *testing.T) {
	buf := captureLog(t, LevelWarn)
	dir := t.TempDir()
	reg, err := LoadRegistry([]string{dir}) // a directory exists but cannot be read as a file
	require.NoError(t, err)
	require.Empty(t, reg.Entries())
	require.Contains(t, buf.String(), "godat: warn: registry: cannot read "+dir)
}

func TestRegistryRepositoryDatConf(t *testing.T) {
	reg, err := LoadRegistry([]string{filepath.Join("..", "dat.conf")})
	require.NoError(t, err)
	require.Empty(t, reg.Problems())
	want := map[string]string{"godat-shm": "shm", "godat-tcp": "tcp", "godat-tcp6": "tcp", "godat": "auto",
		"godat-verbs": "verbs", "ofa-v2-ib0": "verbs-or-auto", "OpenIB-cma": "verbs-or-auto",
		"OpenIB-rxe0-1": "verbs-or-auto", "ofa-v2-cma-roe-eth0": "verbs-or-auto"}
	for name, transport := range want {
		e, err := reg.Lookup(name, 1, 2)
		require.NoError(t, err, name)
		require.Equal(t, "libdat.so.1", e.LibPath)
		require.Equal(t, "godat.1.0", e.ProviderVersion)
		require.True(t, e.ThreadSafe)
		p, err := ParseIAParams(e.IAParams)
		require.NoError(t, err)
		require.Equal(t, transport, p["transport"], name)
	}
	require.LessOrEqual(t, len(reg.Entries()), 5+10)
	seen := map[string]bool{}
	for _, e := range reg.Entries() {
		require.False(t, seen[e.IAName], "duplicate %s", e.IAName)
		seen[e.IAName] = true
	}
}

func TestRegistryParseIAParams(t *testing.T) {
	p, err := ParseIAParams("")
	require.NoError(t, err)
	require.Empty(t, p)

	p, err = ParseIAParams("transport=tcp,addr=fe80::1%eth0")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"transport": "tcp", "addr": "fe80::1%eth0"}, p)

	for _, bad := range []string{"transport", "=tcp", "transport=", "a=b,", ",a=b", "a=b,,c=d",
		"a=b, c=d", "a=b c", "a=1,a=2", "ib0 0"} {
		_, err := ParseIAParams(bad)
		require.Error(t, err, bad)
	}
}
