package localmodel

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

const (
	// OllamaModule is the module the server binary is built from.
	OllamaModule = "github.com/ollama/ollama"
	// OllamaVersion is the pinned version: newer tags need C headers that a
	// plain Go toolchain does not have.
	OllamaVersion = "v0.6.5"
)

// FindOrBuild returns the path of an Ollama server binary: $ARBITER_OLLAMA_BIN
// when set (taken as is), else an ollama on PATH or in the Go bin directory
// whose build info says OllamaModule at OllamaVersion, else one built now with
// `go install OllamaModule@OllamaVersion` (a few minutes from empty caches;
// concurrent callers on one machine build once).
func FindOrBuild(ctx context.Context) (string, error) {
	if p := os.Getenv("ARBITER_OLLAMA_BIN"); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("ARBITER_OLLAMA_BIN=%s: %w", p, err)
		}
		return p, nil
	}

	binDir := goBinDir(ctx)
	p, notFound := findPinned(binDir)
	if notFound == nil {
		return p, nil
	}

	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no ollama %s on PATH or in %s (%w), and no go tool to build it: "+
			"install it with `go install %s@%s` or set ARBITER_OLLAMA_BIN",
			OllamaVersion, binDir, notFound, OllamaModule, OllamaVersion)
	}

	unlock, err := lockInstall(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	// Another process may have built it while this one waited for the lock.
	if p, err := findPinned(binDir); err == nil {
		return p, nil
	}

	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, goTool, "install", OllamaModule+"@"+OllamaVersion)
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w\n%s", OllamaModule, OllamaVersion, err, lastBytes(out.Bytes(), 4000))
	}
	p = filepath.Join(binDir, exeName("ollama"))
	if err := checkPinned(p); err != nil {
		return "", fmt.Errorf("after go install %s@%s: %w", OllamaModule, OllamaVersion, err)
	}
	return p, nil
}

// findPinned looks for a pinned ollama on PATH, then in binDir.
func findPinned(binDir string) (string, error) {
	var errs []error
	if p, err := exec.LookPath("ollama"); err == nil {
		err := checkPinned(p)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	p := filepath.Join(binDir, exeName("ollama"))
	if err := checkPinned(p); err != nil {
		return "", errors.Join(append(errs, err)...)
	}
	return p, nil
}

// checkPinned reports whether the binary at path was built from OllamaModule
// at OllamaVersion, by its embedded build info (what `go version -m` prints).
func checkPinned(path string) error {
	if err := checkExecutable(path); err != nil {
		return err
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: no Go build info (not a source build of %s): %w", path, OllamaModule, err)
	}
	if v := moduleVersion(bi); v != OllamaVersion {
		if v == "" {
			v = bi.Path
		}
		return fmt.Errorf("%s is %s, want %s %s", path, v, OllamaModule, OllamaVersion)
	}
	return nil
}

// moduleVersion returns the version of OllamaModule as the main module of a
// binary, or "" when the binary is something else.
func moduleVersion(bi *debug.BuildInfo) string {
	if bi == nil || bi.Main.Path != OllamaModule {
		return ""
	}
	return bi.Main.Version
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || (runtime.GOOS != "windows" && fi.Mode()&0o111 == 0) {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// goBinDir is where `go install` puts binaries: GOBIN, else the first GOPATH
// entry's bin.
func goBinDir(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "go", "env", "GOBIN", "GOPATH").Output()
	if err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) == 2 {
			if gobin := strings.TrimSpace(lines[0]); gobin != "" {
				return gobin
			}
			if gopath := filepath.SplitList(strings.TrimSpace(lines[1])); len(gopath) > 0 && gopath[0] != "" {
				return filepath.Join(gopath[0], "bin")
			}
		}
	}
	return filepath.Join(build.Default.GOPATH, "bin")
}

func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// lastBytes returns at most n bytes from the end of b, for error messages that
// quote a log.
func lastBytes(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
