package prompts

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func TestDigest(t *testing.T) {
	t.Parallel()
	hash := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	def, err := defaults.ReadFile("phase1_intention_user.md")
	if err != nil {
		t.Fatal(err)
	}
	sim := t.TempDir()
	os.Mkdir(filepath.Join(sim, OverrideDir), 0o755)
	override := []byte("You are {{.Name}}.\n")
	if err := os.WriteFile(filepath.Join(sim, OverrideDir, "phase1_intention_system.md"), override, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := New(sim)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Digest("phase1_intention_user.md"); got != hash(def) {
		t.Errorf("digest of a default = %s, want the SHA-256 of the embedded file %s", got, hash(def))
	}
	if got := r.Digest("phase1_intention_system.md"); got != hash(override) {
		t.Errorf("digest of an override = %s, want the SHA-256 of the override %s", got, hash(override))
	}
	if got := r.Digest("nope.md"); got != "" {
		t.Errorf("digest of no template = %q, want \"\"", got)
	}
}
