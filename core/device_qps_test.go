package core

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The QP-number map follows EPs as they come and go.
func TestDeviceQPMap(t *testing.T) {
	d := &device{}
	a, b := &EP{}, &EP{}
	d.setQP(7, a)
	d.setQP(9, b)
	require.Same(t, a, d.epOfQP(7))
	require.Same(t, b, d.epOfQP(9))
	require.Nil(t, d.epOfQP(8))
	d.setQP(7, nil)
	require.Nil(t, d.epOfQP(7))
	require.Same(t, b, d.epOfQP(9))
}

// Recording n EPs: their cost must not grow with the EPs already there (a
// process with thousands of connections creates thousands of EPs).
func BenchmarkDeviceSetQP(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				d := &device{}
				for i := range n {
					d.setQP(uint32(i), &EP{})
				}
			}
		})
	}
}
