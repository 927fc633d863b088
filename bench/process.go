package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/arbiter-sim/arbiter/internal/tail"
)

// ServerEnv is the variable through which a parent hands the stand-in
// server's configuration (JSON) to the child process that runs it.
const ServerEnv = "ARBITER_BENCH_SERVER"

// Launcher says how to start the child process that runs the stand-in
// server: a program that calls ServeChild when ServerEnv is set (the arbiter
// binary's hidden `bench serve` command, or a test binary's TestMain).
type Launcher struct {
	Path string
	Args []string
	Env  []string // added to the parent's environment
}

// Child is a stand-in server running in a child process.
type Child struct {
	URL string // base URL, ending in /v1

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail.Buffer
	exited chan struct{}
	err    error // of cmd.Wait, once exited is closed

	killed bool  // Kill ended it, as an endpoint that dies mid-run
	last   Stats // what it had counted when it was killed
}

// StartServer starts the stand-in server in a child process and waits until
// it listens; ctx ending stops the wait. The child ends when Close is
// called or when the parent dies (its stdin closes), not when ctx ends: a
// run that is interrupted still reads what it counted.
func StartServer(ctx context.Context, l Launcher, cfg ServerConfig) (*Child, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if l.Path == "" {
		return nil, errors.New("stand-in server: no program to start it with")
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(l.Path, l.Args...)
	cmd.Env = append(append(os.Environ(), l.Env...), ServerEnv+"="+string(conf))
	c := &Child{cmd: cmd, stderr: &tail.Buffer{Max: 4096}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stand-in server: start %s: %w", l.Path, err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case line := <-lines:
		if url, ok := strings.CutPrefix(line, "listening "); ok {
			c.URL = url
			return c, nil
		}
		c.Close()
		return nil, fmt.Errorf("stand-in server: %s %s did not say where it listens (said %q)%s", l.Path, strings.Join(l.Args, " "), line, said(c.stderr))
	case <-timer.C:
		c.Close()
		return nil, fmt.Errorf("stand-in server: %s did not start within 30s%s", l.Path, said(c.stderr))
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	}
}

// Stats asks the child what its server counted (once killed, what it had
// counted then).
func (c *Child) Stats(ctx context.Context) (Stats, error) {
	if c.killed {
		return c.last, nil
	}
	var s Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.URL, "/v1")+"/bench/stats", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("stand-in server stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("stand-in server stats: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return s, fmt.Errorf("stand-in server stats: %w", err)
	}
	return s, nil
}

// Kill ends the child at once, as a model server that dies: its calls in
// flight are cut and its port refuses the next ones. What it had counted is
// kept for Stats.
func (c *Child) Kill() {
	if c.killed {
		return
	}
	c.last, _ = c.Stats(context.Background())
	c.killed = true
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// Close ends the child (closing its stdin, then killing it if it has not
// exited within 10 s) and returns the CPU time it used.
func (c *Child) Close() (time.Duration, error) {
	_ = c.stdin.Close()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	var cpu time.Duration
	if ps := c.cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	if c.err != nil && !c.killed {
		return cpu, fmt.Errorf("stand-in server: %w%s", c.err, said(c.stderr))
	}
	return cpu, nil
}

// ServeChild is the child process's side: it reads the configuration from
// ServerEnv, runs the server, writes "listening <url>" on stdout once it
// listens, and returns when stdin closes (the parent is done or gone) or
// ctx ends.
func ServeChild(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	raw := os.Getenv(ServerEnv)
	if raw == "" {
		return fmt.Errorf("%s is not set: this command is started by `arbiter bench`, not by hand", ServerEnv)
	}
	var cfg ServerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fmt.Errorf("%s: %w", ServerEnv, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	return Serve(ctx, cfg, func(url string) { fmt.Fprintf(stdout, "listening %s\n", url) })
}

// said is ": <what the child wrote on stderr>", or "".
func said(stderr *tail.Buffer) string {
	if s := stderr.String(); s != "" {
		return ": " + s
	}
	return ""
}
