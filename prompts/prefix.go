package prompts

// SharedPrefix is the length in bytes of the longest prefix every text of
// texts starts with: of a phase's system prompts, what a provider's prefix
// cache can serve to every call after the first.
func SharedPrefix(texts []string) int {
	if len(texts) == 0 {
		return 0
	}
	n := len(texts[0])
	for _, s := range texts[1:] {
		n = min(n, len(s))
		for i := range n {
			if s[i] != texts[0][i] {
				n = i
				break
			}
		}
	}
	return n
}
