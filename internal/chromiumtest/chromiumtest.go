// Package chromiumtest checks HTML pages in headless Chromium, for the
// tests of the pages arbiter writes (the report, an eval's page).
package chromiumtest

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Find is the headless browser pages are checked in: Debian's chromium
// package (installed by .ci/run). Without it the test skips and says how
// to install it.
func Find(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("headless Chromium is not installed (neither chromium nor chromium-browser is on PATH); on Debian: apt-get install -y chromium")
	return ""
}

// Browse runs headless Chromium on the page with args and returns its
// standard output.
func Browse(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, errOut.String())
	}
	return out.Bytes()
}

// Screenshot takes a screenshot of page 1280 pixels wide and height high
// and checks that it is that size and a page, not a blank; it returns the
// PNG.
func Screenshot(t *testing.T, bin, page string, height int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shot.png")
	Browse(t, bin, page, "--hide-scrollbars", "--window-size=1280,"+strconv.Itoa(height), "--screenshot="+path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X != 1280 || sz.Y != height {
		t.Errorf("screenshot is %v, want 1280x%d", sz, height)
	}
	colours := map[uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 7 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("the screenshot has %d colours: a blank page?", len(colours))
	}
	return b
}
