package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnvVarsDeclared(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range EnvVars {
		require.NotEmpty(t, e.Name)
		require.NotEmpty(t, e.Help, e.Name)
		require.False(t, seen[e.Name], "declared twice: %s", e.Name)
		seen[e.Name] = true
	}
	for _, name := range []string{"DAT_OVERRIDE", "DAT_DBG_TYPE", "DAPL_DBG_TYPE", "GODAT_LOG", "GODAT_LOG_FILE"} {
		require.True(t, seen[name], "missing %s", name)
	}
}

func TestEnvGetenvDefaultAndSet(t *testing.T) {
	t.Setenv("GODAT_LOG", "")
	require.Equal(t, "", Getenv("GODAT_LOG"), "set to empty is not unset")

	t.Setenv("GODAT_LOG_FILE", "/tmp/x.log")
	require.Equal(t, "/tmp/x.log", Getenv("GODAT_LOG_FILE"))
}

func TestEnvGetenvUnsetGivesDefault(t *testing.T) {
	t.Setenv("GODAT_LOG_FILE", "") // registers restore of the original value
	require.NoError(t, unsetenv("GODAT_LOG_FILE"))
	require.Equal(t, "stderr", Getenv("GODAT_LOG_FILE"))
}

func TestEnvGetenvUndeclaredPanics(t *testing.T) {
	require.PanicsWithValue(t,
		"godat: environment variable HOME is not declared in core.EnvVars",
		func() { Getenv("HOME") })
}
