package main

import (
	"strings"
	"testing"
)

// TestWrap: lines longer than the width break at spaces, never inside a
// word; a continued list item hangs under its text; spacing within a line
// is kept; colour sequences take no column; a word longer than the width
// stays whole; width 0 wraps nothing.
func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"short", "a b c", 10, "a b c"},
		{"words", "one two three four", 9, "one two\nthree\nfour"},
		{"list item", "  - Fighter: cost 2, health 3.", 16, "  - Fighter:\n    cost 2,\n    health 3."},
		{"numbered", "1. alpha beta", 8, "1. alpha\n   beta"},
		{"spacing kept", "p1:     person and more", 16, "p1:     person\nand more"},
		{"colour", "\x1b[1;31mred\x1b[0m word", 8, "\x1b[1;31mred\x1b[0m word"},
		{"long word", "a verylongword b", 5, "a\nverylongword\nb"},
		{"no width", "one two three", 0, "one two three"},
		{"lines", "aa bb\ncc dd", 3, "aa\nbb\ncc\ndd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := wrap(tc.in, tc.width)
			if got != tc.want {
				t.Errorf("wrap(%q, %d) =\n%q\nwant\n%q", tc.in, tc.width, got, tc.want)
			}
			if tc.width > 0 {
				for _, l := range strings.Split(got, "\n") {
					if columnsOf(l) > tc.width && strings.Contains(strings.TrimSpace(l), " ") {
						t.Errorf("line %q is longer than %d and could have been broken", l, tc.width)
					}
				}
			}
		})
	}
}
