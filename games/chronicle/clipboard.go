package chronicle

import "encoding/base64"

// osc52 is the terminal escape sequence that puts text on the system
// clipboard (OSC 52, understood by xterm, iTerm2, kitty, WezTerm, Windows
// Terminal, foot, tmux with set-clipboard on, ...).
func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
}
