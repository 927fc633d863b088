package bench

import (
	"runtime"
	"testing"
)

// On Linux a world's peak RSS is its own: once reset, the peak is not an
// earlier allocation's that has since been freed.
func TestResetPeakRSSForgetsAnEarlierPeak(t *testing.T) {
	if runtime.GOOS != "linux" {
		if resetPeakRSS() {
			t.Fatal("the peak was reset on " + runtime.GOOS)
		}
		t.Skip("only Linux lets the peak be reset")
	}
	const size = 256 << 20
	big := make([]byte, size)
	for i := range big {
		big[i] = 1 // resident
	}
	_, peak, err := usage()
	runtime.KeepAlive(big)
	if err != nil {
		t.Fatal(err)
	}
	if peak < size {
		t.Fatalf("peak RSS %d with %d bytes resident", peak, size)
	}
	big = nil
	if !resetPeakRSS() {
		t.Fatal("the peak could not be reset on Linux")
	}
	_, after, err := usage()
	if err != nil {
		t.Fatal(err)
	}
	if after > peak-size/2 {
		t.Errorf("peak RSS %d after the reset, %d before: the freed %d bytes still count", after, peak, size)
	}
}
