package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"godat/core"
)

func TestCQuote(t *testing.T) {
	assert.Equal(t, `"plain"`, cQuote("plain"))
	assert.Equal(t, `"a \"q\" \\ b"`, cQuote(`a "q" \ b`))
	assert.Equal(t, `"tab\011nl\012\303\251"`, cQuote("tab\tnl\né"))
	assert.Equal(t, `""`, cQuote(""))
}

func TestCTableHasEveryVariable(t *testing.T) {
	table := string(cTable(core.EnvVars))
	for _, v := range core.EnvVars {
		assert.Contains(t, table, cQuote(v.Name)+", "+cQuote(v.Default)+",\n\t "+cQuote(v.Help)+"},")
	}
}

func TestUndocumented(t *testing.T) {
	vars := []core.EnvVar{{Name: "GODAT_LOG"}, {Name: "GODAT_LOG_FILE"}, {Name: "DAT_OVERRIDE"}}
	page := []byte(".TP\n.B GODAT_LOG_FILE\nwhere logs go\n.B \\fBDAT_OVERRIDE\\fR\n")
	// GODAT_LOG appears only as the prefix of GODAT_LOG_FILE: not documented.
	assert.Equal(t, []string{"GODAT_LOG"}, undocumented(page, vars))
}
