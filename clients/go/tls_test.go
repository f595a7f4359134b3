package agenticdriver

import (
	"crypto/tls"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

func TestVerifiedHTTPSWithAPrivateCA(t *testing.T) {
	pki := newTestPKI(t)
	var requests atomic.Int32
	srv := pki.startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		writeSSE(w, startedEvent, deltaEvent, completedEvent)
	}))
	trusted := &tls.Config{RootCAs: pki.pool}
	ctx := testContext(t)

	if err := each(newTestClient(t, srv.URL, WithTLSConfig(trusted)).Stream(ctx, demo()), func(Event) error { return nil }); err != nil {
		t.Fatalf("trusted CA: %v", err)
	}
	transport := &http.Transport{TLSClientConfig: trusted}
	defer transport.CloseIdleConnections()
	if err := each(newTestClient(t, srv.URL, WithTransport(transport)).Stream(ctx, demo()), func(Event) error { return nil }); err != nil {
		t.Fatalf("caller transport: %v", err)
	}
	before := requests.Load()
	if err := each(newTestClient(t, srv.URL).Stream(ctx, demo()), func(Event) error { return nil }); err == nil {
		t.Fatal("a client without the CA trusted the server")
	}
	mismatch := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if err := each(newTestClient(t, mismatch, WithTLSConfig(trusted)).Stream(ctx, demo()), func(Event) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), "certificate") {
		t.Fatalf("hostname mismatch: %v", err)
	}
	if requests.Load() != before {
		t.Fatal("an unverified handshake reached the handler")
	}
}
