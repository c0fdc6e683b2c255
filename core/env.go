package core

//go:generate go run ../tools/envgen -o ../tools/datinfo/env.h

import (
	"os"
	"sync/atomic"
)

// EnvVar describes one environment variable the library reads, so that the
// diagnostic tool can list every knob with its default and meaning.
type EnvVar struct {
	Name    string
	Default string
	Help    string
}

// EnvVars is the single list of environment variables godat reads; Getenv
// refuses any other name, so this list cannot drift from the code.
var EnvVars = []EnvVar{
	{
		Name:    "DAT_OVERRIDE",
		Default: "",
		Help:    "path of a dat.conf used instead of the installed one (compatible with the reference libdat)",
	},
	{
		Name:    "DAT_DBG_TYPE",
		Default: "0",
		Help:    "reference libdat debug mask; any non-zero value enables godat logging at debug level",
	},
	{
		Name:    "DAPL_DBG_TYPE",
		Default: "0",
		Help:    "reference uDAPL provider debug mask; any non-zero value enables godat logging at debug level",
	},
	{
		Name:    "GODAT_LOG",
		Default: "off",
		Help:    "log level: 0/off, error, warn, info, debug, or 1 (= debug); overrides the debug masks when set",
	},
	{
		Name:    "GODAT_LOG_FILE",
		Default: "stderr",
		Help:    "where log lines go: stderr or a file path (appended to); never stdout",
	},
	{
		Name:    "GODAT_TEST_PANIC",
		Default: "0",
		Help:    "test hook: 1 makes dat_ia_openv panic inside Go, to check that the panic becomes DAT_INTERNAL_ERROR",
	},
}

// Getenv returns the value of a declared environment variable, or its
// default when unset. Reading an undeclared name is a programming error and
// panics, so that every variable the library honours is documented.
func Getenv(name string) string {
	v, ok := lookupEnv(name)
	if !ok {
		return envVar(name).Default
	}
	return v
}

// lookupEnv is Getenv for callers that must tell "unset" from "set to the
// default" (GODAT_LOG overrides the debug masks only when set).
func lookupEnv(name string) (string, bool) {
	envVar(name)
	if f := envSource.Load(); f != nil {
		return (*f)(name)
	}
	return os.LookupEnv(name)
}

// envSource reads the live process environment when set. Inside a C
// program, Go's os package sees only a copy of the environment taken when
// the library was loaded, so a consumer's setenv("DAT_OVERRIDE", ...) would
// go unseen; the export layer installs a getenv-based source.
var envSource atomic.Pointer[func(string) (string, bool)]

// SetEnvSource makes Getenv read variables through f.
func SetEnvSource(f func(string) (string, bool)) { envSource.Store(&f) }

func envVar(name string) EnvVar {
	for _, e := range EnvVars {
		if e.Name == name {
			return e
		}
	}
	panic("godat: environment variable " + name + " is not declared in core.EnvVars")
}
