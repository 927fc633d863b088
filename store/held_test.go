package store

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestHeldTexts: a held text reads back as it was, whether packed against
// a dictionary or alone, from many goroutines at once; texts alike (one
// template's, as a tick's prompts are) take a fraction of what each alone
// does; a dictionary is made of a text of a start not seen before.
func TestHeldTexts(t *testing.T) {
	template := strings.Repeat("You play one character in the storm; speak only for yourself. ", 30)
	var d heldDicts
	var wg sync.WaitGroup
	sizes := make([]int, 64)
	for i := range sizes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("%s\nYou are character %d, who keeps lamp %d.", template, i, i*7)
			h := d.hold(text)
			got, err := h.text()
			if err != nil || got != text {
				t.Errorf("text %d read back as %q, %v", i, got[max(0, len(got)-40):], err)
			}
			sizes[i] = len(h.body)
		}()
	}
	wg.Wait()
	alone := len(pack(template + "\nYou are character 1, who keeps lamp 7."))
	for i, n := range sizes {
		if n*4 > alone {
			t.Errorf("text %d held in %d bytes, packed alone %d: want a quarter or less", i, n, alone)
		}
	}
	if len(d.m) != 1 {
		t.Errorf("%d dictionaries for texts of one start, want 1", len(d.m))
	}
	for _, text := range []string{"short", strings.Repeat("x", 70<<10), "Another template " + template} {
		h := d.hold(text)
		if got, err := h.text(); err != nil || got != text {
			t.Errorf("a text of %d bytes read back as one of %d, %v", len(text), len(got), err)
		}
	}
	if len(d.m) != 2 {
		t.Errorf("%d dictionaries after a text of a new start, want 2", len(d.m))
	}
	for i := range maxDicts + 1 {
		d.hold(fmt.Sprintf("%08d%s", i, template))
	}
	if len(d.m) > maxDicts {
		t.Errorf("%d dictionaries held, want at most %d", len(d.m), maxDicts)
	}
}
