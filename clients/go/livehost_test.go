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

// liveHosts is the real agenticdriver host (conformance/live-host-process.ts, run with
// Node and tsx from the repository root) over HTTP and over HTTPS with a throwaway CA.
// Both are started once, by the first test that needs them, and stopped by TestMain.
type liveHosts struct {
	token     string
	http      *liveProcess
	https     *liveProcess
	tlsConfig *tls.Config
	dir       string
}

// liveProcess is one launcher process serving one host.
type liveProcess struct {
	url     string
	process *exec.Cmd
	stdin   io.WriteCloser
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
// test CA), starting the hosts on first use.
func liveClient(t *testing.T, transport string) *Client {
	t.Helper()
	liveOnce.Do(func() { live, liveErr = startLiveHosts() })
	if liveErr != nil {
		t.Fatalf("the real host did not start: %v", liveErr)
	}
	url, opts := live.http.url, []Option(nil)
	if transport == "https" {
		url, opts = live.https.url, []Option{WithTLSConfig(live.tlsConfig)}
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
	h := &liveHosts{token: randomToken(), dir: dir}
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
	tokens := map[string]string{"main": h.token, "restricted": randomToken()}
	if h.http, err = startLiveProcess(repository, filepath.Join(h.dir, "http.log"), tokens); err != nil {
		return err
	}
	tokens["certFile"], tokens["keyFile"] = certFile, keyFile
	h.https, err = startLiveProcess(repository, filepath.Join(h.dir, "https.log"), tokens)
	return err
}

func startLiveProcess(repository, logPath string, options map[string]string) (*liveProcess, error) {
	encoded, _ := json.Marshal(options)
	// A file, not a pipe: an unread pipe could fill up and stall the host's logging.
	stderr, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	p := &liveProcess{process: exec.Command("node", "--import", "tsx", filepath.Join("conformance", "live-host-process.ts"), string(encoded))}
	p.process.Dir = repository
	p.process.Stderr = stderr
	if p.stdin, err = p.process.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := p.process.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.process.Start(); err != nil {
		return nil, err
	}
	watchdog := time.AfterFunc(liveHostStartTimeout, func() { p.process.Process.Kill() })
	defer watchdog.Stop()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		p.stop()
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("no address from the host (%v): %s", err, log)
	}
	var announced struct{ URL string }
	if err := json.Unmarshal(line, &announced); err != nil || announced.URL == "" {
		p.stop()
		return nil, fmt.Errorf("unexpected host announcement %q", line)
	}
	p.url = announced.URL
	return p, nil
}

// stop closes the launcher's stdin, which closes its host, and waits for it to exit.
func (p *liveProcess) stop() {
	if p == nil || p.process.Process == nil {
		return
	}
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.process.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.process.Process.Kill()
		<-done
	}
}

func (h *liveHosts) stop() {
	h.http.stop()
	h.https.stop()
	os.RemoveAll(h.dir)
}

func randomToken() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}
