package agenticdriver

import (
	"bufio"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const liveHostStartTimeout = 60 * time.Second

// liveHosts is the real agenticdriver host (testdata/live_host.ts, run with Node and
// tsx from the repository root) over HTTP and over HTTPS with a throwaway CA. It is
// started once, by the first test that needs it, and stopped by TestMain.
type liveHosts struct {
	token      string
	httpURL    string
	httpsURL   string
	tlsConfig  *tls.Config
	dir        string
	process    *exec.Cmd
	stdin      io.WriteCloser
	stderrPath string
}

var (
	liveOnce sync.Once
	live     *liveHosts
	liveErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if live != nil {
		live.stop()
	}
	os.Exit(code)
}

// forEachLiveHost runs test against the real host over HTTP and over verified HTTPS.
func forEachLiveHost(t *testing.T, test func(t *testing.T, client *Client)) {
	for _, transport := range []string{"http", "https"} {
		t.Run(transport, func(t *testing.T) { test(t, liveClient(t, transport)) })
	}
}

// liveClient returns a client of the real host over "http" or "https" (trusting the
// test CA), starting the host on first use.
func liveClient(t *testing.T, transport string) *Client {
	t.Helper()
	liveOnce.Do(func() { live, liveErr = startLiveHosts() })
	if liveErr != nil {
		t.Fatalf("the real host did not start: %v", liveErr)
	}
	url, opts := live.httpURL, []Option(nil)
	if transport == "https" {
		url, opts = live.httpsURL, []Option{WithTLSConfig(live.tlsConfig)}
	}
	client, err := New(url, live.token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func startLiveHosts() (*liveHosts, error) {
	repository, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agenticdriver-go-live-")
	if err != nil {
		return nil, err
	}
	h := &liveHosts{token: randomToken(), dir: dir, stderrPath: filepath.Join(dir, "host.log")}
	if err := h.start(repository); err != nil {
		h.stop()
		return nil, err
	}
	return h, nil
}

func (h *liveHosts) start(repository string) error {
	pki, err := generateTestPKI()
	if err != nil {
		return err
	}
	h.tlsConfig = &tls.Config{RootCAs: pki.pool}
	certFile, keyFile, err := pki.writeServerPEM(h.dir)
	if err != nil {
		return err
	}
	options, _ := json.Marshal(map[string]string{"main": h.token, "restricted": randomToken(), "certFile": certFile, "keyFile": keyFile})
	// A file, not a pipe: an unread pipe could fill up and stall the host's logging.
	stderr, err := os.Create(h.stderrPath)
	if err != nil {
		return err
	}
	defer stderr.Close()
	h.process = exec.Command("node", "--import", "tsx", filepath.Join("clients", "go", "testdata", "live_host.ts"), string(options))
	h.process.Dir = repository
	h.process.Stderr = stderr
	if h.stdin, err = h.process.StdinPipe(); err != nil {
		return err
	}
	stdout, err := h.process.StdoutPipe()
	if err != nil {
		return err
	}
	if err := h.process.Start(); err != nil {
		return err
	}
	watchdog := time.AfterFunc(liveHostStartTimeout, func() { h.process.Process.Kill() })
	defer watchdog.Stop()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		log, _ := os.ReadFile(h.stderrPath)
		return fmt.Errorf("no address from the host (%v): %s", err, log)
	}
	var urls struct{ HTTP, HTTPS string }
	if err := json.Unmarshal(line, &urls); err != nil || urls.HTTP == "" || urls.HTTPS == "" {
		return fmt.Errorf("unexpected host announcement %q", line)
	}
	h.httpURL, h.httpsURL = urls.HTTP, urls.HTTPS
	return nil
}

// stop closes the launcher's stdin, which closes both hosts, and waits for it to exit.
func (h *liveHosts) stop() {
	if h.process != nil && h.process.Process != nil {
		h.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- h.process.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			h.process.Process.Kill()
			<-done
		}
	}
	os.RemoveAll(h.dir)
}

func randomToken() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}
