package agenticdriver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"iter"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testToken = "test-token-0123456789abcdef0123456789"

const (
	startedEvent   = `{"type":"run.started","runId":"r1","sequence":1,"timestamp":"2026-09-20T12:00:00.000Z","provider":"mock","model":"demo"}`
	deltaEvent     = `{"type":"text.delta","runId":"r1","sequence":2,"timestamp":"2026-09-20T12:00:00.000Z","text":"Hi"}`
	completedEvent = `{"type":"run.completed","runId":"r1","sequence":3,"timestamp":"2026-09-20T12:00:00.000Z","result":{"runId":"r1","provider":"mock","model":"demo","text":"Hi","usage":{"inputTokens":0},"steps":1,"finishReason":"stop"}}`
	resultJSON     = `{"runId":"r1","provider":"mock","model":"demo","text":"Hi","usage":{},"steps":1,"finishReason":"stop"}`
)

func demo() RunRequest { return RunRequest{Provider: "mock", Model: "demo", Input: "Hello"} }

// sseBody frames each event as one SSE message.
func sseBody(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	return b.String()
}

func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("AgenticDriver-Version", "1.0")
	fmt.Fprint(w, sseBody(events...))
	w.(http.Flusher).Flush()
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("AgenticDriver-Version", "1.0")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

func newTestClient(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := New(url, testToken, opts...)
	if err != nil {
		t.Fatalf("New(%q): %v", url, err)
	}
	return c
}

func expectCode(t *testing.T, err error, code string) *DriverError {
	t.Helper()
	if !isCode(err, code) {
		t.Fatalf("got %v, want %s", err, code)
	}
	de, _ := err.(*DriverError)
	return de
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// testPKI is a throwaway CA and a server certificate it issued for 127.0.0.1 only.
type testPKI struct {
	pool   *x509.CertPool
	server tls.Certificate
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	pki, err := generateTestPKI()
	if err != nil {
		t.Fatal(err)
	}
	return pki
}

func generateTestPKI() (testPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return testPKI{}, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agenticdriver test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return testPKI{}, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return testPKI{}, err
	}
	leafTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTemplate, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return testPKI{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return testPKI{pool: pool, server: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}, nil
}

// writeServerPEM writes the server certificate and its key as PEM files into dir.
func (p testPKI) writeServerPEM(dir string) (certFile, keyFile string, err error) {
	key, err := x509.MarshalPKCS8PrivateKey(p.server.PrivateKey)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.server.Certificate[0]})
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600)
}

// startTLS serves handler over HTTPS with the PKI's server certificate.
func (p testPKI) startTLS(t *testing.T, handler http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(handler)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.server}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // rejected handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// each drains a stream the way a caller that wants one error does: fn sees every event;
// fn's error stops the stream (closing the connection) and is returned; a run.failed or
// run.cancelled comes back as its *DriverError.
func each(events iter.Seq2[Event, error], fn func(Event) error) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(ev); err != nil {
				return err
			}
		}
		if ev.Terminal() {
			return terminalError(&ev)
		}
	}
	return nil
}
