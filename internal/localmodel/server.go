package localmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-sim/arbiter/internal/tail"
)

// Time limits of Start and Stop.
const (
	readyTimeout = 60 * time.Second // ollama serve answering /api/version
	stopGrace    = 5 * time.Second  // SIGTERM to SIGKILL
	pollInterval = 100 * time.Millisecond
	startTries   = 3 // fresh ports when ollama serve exits before answering
)

// Options configures Start. Every field may be left zero.
type Options struct {
	// GGUF is the model file; default DefaultGGUF().
	GGUF string
	// ModelName is the name the model is created and served under; default
	// ModelName(GGUF).
	ModelName string
	// Binary is the ollama binary; default FindOrBuild(ctx).
	Binary string
	// LogWriter receives the output of ollama serve and ollama create;
	// default discarded (the end of it is quoted in errors either way).
	LogWriter io.Writer
}

// Server is a running ollama serve with one model created. Stop it.
type Server struct {
	addr  string // 127.0.0.1:port
	model string
	dir   string // OLLAMA_MODELS and HOME live here; removed by Stop
	env   []string
	bin   string
	log   *tail.Buffer
	out   io.Writer // LogWriter + log

	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd.Wait returns
	waitErr error         // cmd.Wait's result, set before exited closes

	stopOnce sync.Once
	stopErr  error
}

// Start starts ollama serve on a free 127.0.0.1 port with a temporary model
// directory and HOME, waits until it answers, creates the model from the
// Modelfile (testdata/Modelfile.tmpl) and checks that /v1/models lists it. On
// error nothing is left running. ctx bounds the start, not the server's life.
func Start(ctx context.Context, opts Options) (*Server, error) {
	gguf := opts.GGUF
	if gguf == "" {
		var err error
		if gguf, err = DefaultGGUF(); err != nil {
			return nil, err
		}
	} else {
		abs, err := checkGGUF(gguf)
		if err != nil {
			return nil, fmt.Errorf("model file: %w", err)
		}
		gguf = abs
	}
	modelfile, err := RenderModelfile(gguf)
	if err != nil {
		return nil, err
	}
	name := opts.ModelName
	if name == "" {
		name = ModelName(gguf)
	}
	bin := opts.Binary
	if bin == "" {
		if bin, err = FindOrBuild(ctx); err != nil {
			return nil, err
		}
	}
	logw := opts.LogWriter
	if logw == nil {
		logw = io.Discard
	}

	var errs []error
	for range startTries {
		s, err := start(ctx, bin, name, modelfile, logw)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, errExitedEarly) {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// errExitedEarly marks an ollama serve that exited before answering, most
// likely because the free port was taken in between: worth one more port.
var errExitedEarly = errors.New("ollama serve exited before answering")

func start(ctx context.Context, bin, name, modelfile string, logw io.Writer) (_ *Server, err error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	sweepStale(os.TempDir(), time.Now())
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		return nil, err
	}
	s := &Server{
		addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		model:  name,
		dir:    dir,
		bin:    bin,
		log:    &tail.Buffer{Max: 8 << 10},
		exited: make(chan struct{}),
	}
	s.out = io.MultiWriter(logw, s.log)
	s.env = serverEnv(os.Environ(), s.addr, dir)
	for _, sub := range []string{"models", "home"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}

	// Not CommandContext: ctx bounds the start; Stop ends the server.
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = s.env
	s.cmd.Dir = dir
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	s.cmd.WaitDelay = stopGrace
	setProcessGroup(s.cmd)
	if err := s.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	// For sweepStale, should this process die without Stop.
	_ = os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(s.PID())), 0o600)
	defer func() {
		if err != nil {
			_ = s.Stop()
			err = fmt.Errorf("%w\n--- ollama log (end) ---\n%s", err, s.log.String())
		}
	}()

	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	if err := s.create(ctx, modelfile); err != nil {
		return nil, err
	}
	if err := s.checkListed(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// BaseURL is the OpenAI-compatible endpoint, "http://127.0.0.1:PORT/v1".
func (s *Server) BaseURL() string { return "http://" + s.addr + "/v1" }

// Model is the name to put in requests.
func (s *Server) Model() string { return s.model }

// PID is the process id of ollama serve, which leads its process group.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Log returns the end of the server's output, for failure messages.
func (s *Server) Log() string { return s.log.String() }

// Stop ends ollama serve and its runners (SIGTERM to the process group, SIGKILL
// after a grace period), waits for it, and removes the temporary directory. It
// is safe to call more than once and from several goroutines; later calls
// return the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	var errs []error
	select {
	case <-s.exited:
	default:
		if err := signalGroup(s.cmd.Process, sigTerm); err != nil {
			errs = append(errs, fmt.Errorf("stop ollama serve (pid %d): %w", s.PID(), err))
		}
		grace := time.NewTimer(stopGrace)
		select {
		case <-s.exited:
			grace.Stop()
		case <-grace.C:
		}
	}
	// Runners are in the group too and may outlive the leader's exit.
	if err := signalGroup(s.cmd.Process, sigKill); err != nil {
		errs = append(errs, fmt.Errorf("kill ollama process group %d: %w", s.PID(), err))
	}
	<-s.exited
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// waitReady polls GET /api/version until it answers 200, the process exits,
// ctx ends or readyTimeout passes.
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	url := "http://" + s.addr + "/api/version"
	for {
		if s.get(ctx, url, nil) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for ollama serve on %s: %w", s.addr, context.Cause(ctx))
		case <-deadline.C:
			return fmt.Errorf("ollama serve on %s did not answer within %s", s.addr, readyTimeout)
		case <-s.exited:
			return fmt.Errorf("%w (%v)", errExitedEarly, s.waitErr)
		case <-tick.C:
		}
	}
}

// create runs `ollama create NAME -f Modelfile` against this server.
func (s *Server) create(ctx context.Context, modelfile string) error {
	path := filepath.Join(s.dir, "Modelfile")
	if err := os.WriteFile(path, []byte(modelfile), 0o600); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, s.bin, "create", s.model, "-f", path)
	cmd.Env = s.env
	cmd.Dir = s.dir
	cmd.Stdout = s.out
	cmd.Stderr = s.out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ollama create %s: %w", s.model, err)
	}
	return nil
}

// checkListed asserts that /v1/models lists the model.
func (s *Server) checkListed(ctx context.Context) error {
	ids, err := ListModels(ctx, s.BaseURL())
	if err != nil {
		return err
	}
	if !slices.Contains(ids, s.model) && !slices.Contains(ids, s.model+":latest") {
		return fmt.Errorf("model %s not in %s/models after create: %v", s.model, s.BaseURL(), ids)
	}
	return nil
}

// ListModels returns the ids that GET baseURL/models lists.
func ListModels(ctx context.Context, baseURL string) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := getJSON(ctx, strings.TrimSuffix(baseURL, "/")+"/models", &list); err != nil {
		return nil, err
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	return ids, nil
}

func (s *Server) get(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return getJSON(ctx, url, v)
}

func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	if v == nil {
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

const tempPrefix = "arbiter-ollama-"

// sweepStale removes the directories that servers of earlier test binaries
// left in tmp when they died without Stop (a -timeout panic): those whose
// ollama serve is gone, and those older than an hour that never recorded one.
// Directories it cannot read or remove (another user's) are left alone.
func sweepStale(tmp string, now time.Time) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && !processAlive(pid) {
				_ = os.RemoveAll(dir)
			}
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > time.Hour {
			_ = os.RemoveAll(dir)
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverEnv is the environment of ollama serve and ollama create: env with the
// address, the model directory and HOME replaced, so a user's own
// OLLAMA_HOST or OLLAMA_MODELS cannot point the test server elsewhere. Other
// OLLAMA_* settings (OLLAMA_DEBUG, OLLAMA_NUM_PARALLEL...) pass through.
func serverEnv(env []string, addr, dir string) []string {
	set := []string{
		"OLLAMA_HOST=" + addr,
		"OLLAMA_MODELS=" + filepath.Join(dir, "models"),
		"OLLAMA_NO_CLOUD=1",
		"OLLAMA_NOHISTORY=1",
		"HOME=" + filepath.Join(dir, "home"),
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return slices.ContainsFunc(set, func(s string) bool {
			key, _, _ := strings.Cut(s, "=")
			return strings.HasPrefix(kv, key+"=")
		})
	})
	// One request at a time: on this model, parallel slots sharing one thread
	// make each call slower than queueing them would.
	if !slices.ContainsFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "OLLAMA_NUM_PARALLEL=") }) {
		out = append(out, "OLLAMA_NUM_PARALLEL=1")
	}
	return append(out, set...)
}
