package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseRegistry checks that no input panics the parser, that every entry
// it accepts satisfies the line invariants, and that writing an entry back
// with every field quoted parses to the same entry.
func FuzzParseRegistry(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "registry", "*"))
	require.NoError(f, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	dat, err := os.ReadFile(filepath.Join("..", "dat.conf"))
	require.NoError(f, err)
	f.Add(dat)

	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(string(data), "\n") + 1
		entries, problems := ParseRegistry(strings.NewReader(string(data)), "fuzz")
		for _, p := range problems {
			require.Equal(t, "fuzz", p.File)
			require.True(t, p.Line >= 1 && p.Line <= lines)
			require.NotEmpty(t, p.Why)
		}
		for _, e := range entries {
			require.Equal(t, "fuzz", e.File)
			require.True(t, e.Line >= 1 && e.Line <= lines)
			require.NotEmpty(t, e.IAName)
			require.LessOrEqual(t, len(e.IAName), maxIANameLen)
			kernel, major, minor, ok := parseAPIVersion(e.APIVersion)
			require.True(t, ok, e.APIVersion)
			require.Equal(t, []any{kernel, major, minor}, []any{e.Kernel, e.APIMajor, e.APIMinor})

			fields := []string{e.IAName, e.APIVersion, "nonthreadsafe", "nondefault",
				e.LibPath, e.ProviderVersion, e.IAParams, e.PlatformParams}
			if e.ThreadSafe {
				fields[2] = "threadsafe"
			}
			if e.Default {
				fields[3] = "default"
			}
			for i, s := range fields {
				require.NotContains(t, s, "\"")
				require.NotContains(t, s, "\n")
				fields[i] = `"` + s + `"`
			}
			again, probs := ParseRegistry(strings.NewReader(strings.Join(fields, " ")), "fuzz")
			require.Empty(t, probs)
			require.Len(t, again, 1)
			again[0].Line = e.Line
			require.Equal(t, e, again[0])
		}
	})
}
