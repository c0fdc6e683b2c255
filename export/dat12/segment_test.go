//go:build cgotest

package dat12

import "testing"

// The DTO hot path views the consumer's DAT_LMR_TRIPLET array as
// []core.Segment and DAT_RMR_TRIPLET as core.RemoteSegment without copying.
func TestSegmentLayout(t *testing.T) {
	checkSegmentLayout(t)
}
