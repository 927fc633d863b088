package session

import "testing"

func TestOrList(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{{nil, "no registered kind"}, {[]string{"duel"}, "duel"}, {[]string{"conquest", "duel"}, "conquest or duel"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := orList(tc.names); got != tc.want {
			t.Errorf("orList(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}
