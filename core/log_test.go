package core

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func unsetenv(name string) error { return os.Unsetenv(name) }

// clearLogEnv unsets every logging variable for the test, restoring them after.
func clearLogEnv(t *testing.T) {
	t.Helper()
	for _, n := range []string{"GODAT_LOG", "GODAT_LOG_FILE", "DAT_DBG_TYPE", "DAPL_DBG_TYPE"} {
		t.Setenv(n, "")
		require.NoError(t, unsetenv(n))
	}
	resetLogging()
	t.Cleanup(resetLogging)
}

// captureLog sends log lines at or above level into the returned buffer
// until the test ends.
func captureLog(t *testing.T, level Level) *bytes.Buffer {
	t.Helper()
	clearLogEnv(t)
	var buf bytes.Buffer
	SetLogOutput(&buf)
	SetLogLevel(level)
	return &buf
}

func TestLogOffByDefault(t *testing.T) {
	clearLogEnv(t)
	var buf bytes.Buffer
	SetLogOutput(&buf)
	Logf(LevelError, "should not appear")
	require.Empty(t, buf.String())
	require.Equal(t, LevelOff, Level(logLevel.Load()))
}

func TestLogPrefixAndLevels(t *testing.T) {
	buf := captureLog(t, LevelWarn)
	Logf(LevelError, "e %d", 1)
	Logf(LevelWarn, "w\n")
	Logf(LevelInfo, "filtered")
	Logf(LevelDebug, "filtered")
	require.Equal(t, "godat: error: e 1\ngodat: warn: w\n", buf.String())
}

func TestLogEnvLevels(t *testing.T) {
	cases := []struct {
		name, value string
		want        Level
	}{
		{"GODAT_LOG", "0", LevelOff},
		{"GODAT_LOG", "1", LevelDebug},
		{"GODAT_LOG", "off", LevelOff},
		{"GODAT_LOG", "error", LevelError},
		{"GODAT_LOG", "WARN", LevelWarn},
		{"GODAT_LOG", "info", LevelInfo},
		{"GODAT_LOG", "debug", LevelDebug},
		{"GODAT_LOG", "loud", LevelWarn},
		{"DAT_DBG_TYPE", "0", LevelOff},
		{"DAT_DBG_TYPE", "0x0", LevelOff},
		{"DAT_DBG_TYPE", "0xffff", LevelDebug},
		{"DAPL_DBG_TYPE", "3", LevelDebug},
		{"DAPL_DBG_TYPE", "", LevelOff},
	}
	for _, c := range cases {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			clearLogEnv(t)
			t.Setenv(c.name, c.value)
			var buf bytes.Buffer
			SetLogOutput(&buf)
			Logf(LevelDebug, "probe")
			require.Equal(t, c.want, Level(logLevel.Load()))
			if c.value == "loud" {
				require.Contains(t, buf.String(), `godat: warn: GODAT_LOG="loud"`)
			}
		})
	}
}

func TestLogGodatLogOverridesMasks(t *testing.T) {
	clearLogEnv(t)
	t.Setenv("DAT_DBG_TYPE", "0xff")
	t.Setenv("GODAT_LOG", "off")
	var buf bytes.Buffer
	SetLogOutput(&buf)
	Logf(LevelError, "x")
	require.Empty(t, buf.String())
}

func TestLogToFile(t *testing.T) {
	clearLogEnv(t)
	path := filepath.Join(t.TempDir(), "godat.log")
	t.Setenv("GODAT_LOG", "info")
	t.Setenv("GODAT_LOG_FILE", path)
	Logf(LevelInfo, "to file")
	Logf(LevelDebug, "not to file")
	resetLogging() // closes the file
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "godat: info: to file\n", string(data))
}

func TestLogBadFileFallsBackToStderr(t *testing.T) {
	clearLogEnv(t)
	t.Setenv("GODAT_LOG", "error")
	t.Setenv("GODAT_LOG_FILE", filepath.Join(t.TempDir(), "no", "such", "dir", "x.log"))
	logMu.Lock()
	configureLocked()
	out := logOut
	logMu.Unlock()
	require.Equal(t, os.Stderr, out)
}

func TestLogLevelString(t *testing.T) {
	require.Equal(t, "warn", LevelWarn.String())
	require.Equal(t, "level(9)", Level(9).String())
}

func TestLogConcurrentLinesDoNotInterleave(t *testing.T) {
	buf := captureLog(t, LevelDebug)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				Logf(LevelDebug, "%s", strings.Repeat("x", 64))
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 800)
	for _, l := range lines {
		require.Equal(t, "godat: debug: "+strings.Repeat("x", 64), l)
	}
}

func BenchmarkLogfDisabled(b *testing.B) {
	logLevel.Store(int32(LevelOff))
	defer resetLogging()
	for i := 0; i < b.N; i++ {
		Logf(LevelDebug, "x %d", i)
	}
}
