package core

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Level orders log lines by importance; a line is written when its level is
// at or below the configured one.
type Level int32

// The log levels, from silent to chatty.
const (
	LevelOff Level = iota
	LevelError
	LevelWarn
	LevelInfo
	LevelDebug
)

// levelUnset marks "environment not read yet". It is above every real level
// so that the fast path in Logf falls through to configuration exactly once.
const levelUnset Level = 1 << 30

var levelNames = [...]string{"off", "error", "warn", "info", "debug"}

// String gives the name GODAT_LOG accepts for the level.
func (l Level) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return "level(" + strconv.Itoa(int(l)) + ")"
}

var (
	logLevel  atomic.Int32 // a Level; the only thing Logf reads when logging is off
	logMu     sync.Mutex   // serialises configuration and writes, so lines never interleave
	logOut    io.Writer    // nil until configured
	logCustom bool         // SetLogOutput was called: do not reopen GODAT_LOG_FILE
)

func init() { logLevel.Store(int32(levelUnset)) }

// Logf writes one line, prefixed "godat: " and the level name, when logging
// is enabled at that level. It costs one atomic load when it is not, so it
// may sit on hot paths.
func Logf(level Level, format string, args ...any) {
	cur := Level(logLevel.Load())
	if level > cur || level <= LevelOff {
		return
	}
	logMu.Lock()
	defer logMu.Unlock()
	if Level(logLevel.Load()) == levelUnset {
		configureLocked()
	}
	if level > Level(logLevel.Load()) || logOut == nil {
		return // reconfigured since the fast-path load
	}
	buf := make([]byte, 0, 128)
	buf = append(buf, "godat: "...)
	buf = append(buf, level.String()...)
	buf = append(buf, ": "...)
	buf = fmt.Appendf(buf, format, args...)
	if buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n')
	}
	_, _ = logOut.Write(buf)
}

// LogEnabled reports whether lines at level are written, so that callers
// can skip preparing a line nobody will read. It costs one atomic load once
// the environment has been read (the first call reads it).
func LogEnabled(level Level) bool {
	cur := Level(logLevel.Load())
	if cur == levelUnset {
		logMu.Lock()
		if Level(logLevel.Load()) == levelUnset {
			configureLocked()
		}
		cur = Level(logLevel.Load())
		logMu.Unlock()
	}
	return level > LevelOff && level <= cur
}

// SetLogOutput redirects log lines, mainly so tests can capture them; nil
// goes back to GODAT_LOG_FILE.
func SetLogOutput(w io.Writer) {
	logMu.Lock()
	defer logMu.Unlock()
	closeLogFileLocked()
	logOut, logCustom = w, w != nil
	if w == nil {
		logLevel.Store(int32(levelUnset)) // reopen the configured file on next use
	}
}

// SetLogLevel overrides the level taken from the environment, for tests and
// for the diagnostic tool's verbose mode.
func SetLogLevel(l Level) {
	logMu.Lock()
	defer logMu.Unlock()
	if Level(logLevel.Load()) == levelUnset {
		configureLocked()
	}
	if l > LevelOff && logOut == nil {
		logOut = os.Stderr
	}
	logLevel.Store(int32(l))
}

// resetLogging forgets the configuration so the next Logf reads the
// environment again (tests change it with t.Setenv).
func resetLogging() {
	logMu.Lock()
	defer logMu.Unlock()
	closeLogFileLocked()
	logOut, logCustom = nil, false
	logLevel.Store(int32(levelUnset))
}

func closeLogFileLocked() {
	if f, ok := logOut.(*os.File); ok && f != os.Stderr && !logCustom {
		_ = f.Close()
	}
	logOut = nil
}

// configureLocked reads GODAT_LOG (or the compat debug masks) and opens the
// output only when logging is on, so a silent library touches no file.
func configureLocked() {
	level, bad := envLevel()
	if level > LevelOff && logOut == nil {
		logOut = openLogFile()
	}
	logLevel.Store(int32(level))
	if bad != "" && logOut != nil {
		fmt.Fprintf(logOut, "godat: warn: GODAT_LOG=%q is not 0, 1, off, error, warn, info or debug; using warn\n", bad)
	}
}

// envLevel returns the level asked for by the environment and, when
// GODAT_LOG is unrecognised, its value (so the caller can complain about it).
func envLevel() (Level, string) {
	if v, ok := lookupEnv("GODAT_LOG"); ok && strings.TrimSpace(v) != "" {
		v = strings.ToLower(strings.TrimSpace(v))
		for i, name := range levelNames {
			if v == name {
				return Level(i), ""
			}
		}
		if n, err := strconv.Atoi(v); err == nil {
			if n == 0 {
				return LevelOff, ""
			}
			return LevelDebug, ""
		}
		return LevelWarn, v
	}
	for _, name := range []string{"DAT_DBG_TYPE", "DAPL_DBG_TYPE"} {
		if debugMaskSet(Getenv(name)) {
			return LevelDebug, ""
		}
	}
	return LevelOff, ""
}

// debugMaskSet mirrors the reference libraries, which parse the masks with
// strtol(…, 0): decimal, 0x hex or 0 octal. Garbage counts as "asked for".
func debugMaskSet(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return false
	}
	n, err := strconv.ParseInt(v, 0, 64)
	return err != nil || n != 0
}

func openLogFile() io.Writer {
	path := Getenv("GODAT_LOG_FILE")
	if path == "" || path == "stderr" {
		return os.Stderr
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "godat: warn: GODAT_LOG_FILE: %v; logging to stderr\n", err)
		return os.Stderr
	}
	return f
}
