package agenticdriver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestNewRejectsUnsafeURLsAndTokens(t *testing.T) {
	for _, raw := range []string{
		"http://example.com", "https://user:pw@example.com",
		"https://example.com/?q=1", "https://example.com/?", "https://example.com/#frag",
		"http://127.1", "http://0x7f.0.0.1", "http://[::ffff:10.0.0.1]",
	} {
		if _, err := New(raw, testToken); !isCode(err, CodeInsecureTransport) {
			t.Errorf("New(%q): %v, want INSECURE_TRANSPORT", raw, err)
		}
	}
	// Not an absolute http(s) URL at all: a URL mistake, not a transport one.
	for _, raw := range []string{"ftp://127.0.0.1", "not a url", "/relative", "127.0.0.1:7433", "localhost:7433", "", "http://[::1%25lo]"} {
		if _, err := New(raw, testToken); !isCode(err, CodeInvalidURL) {
			t.Errorf("New(%q): %v, want INVALID_URL", raw, err)
		}
	}
	for _, raw := range []string{"https://example.com/prefix", "http://127.0.0.1:1", "http://localhost:1", "http://[::1]:1", "http://LOCALHOST", "http://127.8.9.10", "http://[::ffff:127.0.0.1]"} {
		if _, err := New(raw, testToken); err != nil {
			t.Errorf("New(%q): %v", raw, err)
		}
	}
	for _, token := range []string{"", "has space", "nul\x00", strings.Repeat("x", 4097)} {
		if _, err := New("https://example.com", token); !isCode(err, CodeAuthRequired) {
			t.Errorf("token %q: %v, want AUTH_REQUIRED", token, err)
		}
	}
}

func TestRequestsCarryNegotiationHeadersBelowThePathPrefix(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header
		if h.Get("Authorization") != "Bearer "+testToken || h.Get("AgenticDriver-Version") != "1.0" ||
			h.Get("AgenticDriver-Accept-Optional-Events") != "true" {
			t.Errorf("%s: missing negotiation headers: %v", r.URL, h)
		}
		if (r.Method == http.MethodPost) != (h.Get("Content-Type") == "application/json") {
			t.Errorf("%s %s: Content-Type %q", r.Method, r.URL, h.Get("Content-Type"))
		}
		seen = append(seen, r.Method+" "+r.URL.String()+" "+h.Get("Accept"))
		switch r.URL.Path {
		case "/prefix/v1/protocol":
			writeJSON(w, 200, `{"protocol":"agenticdriver","version":"1.0","supportedVersions":["1.0"],"features":[]}`)
		case "/prefix/v1/providers":
			writeJSON(w, 200, `{"providers":[]}`)
		case "/prefix/v1/runs":
			if h.Get("Accept") == "text/event-stream" {
				writeSSE(w, startedEvent, deltaEvent, completedEvent)
			} else {
				writeJSON(w, 200, resultJSON)
			}
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL+"/prefix")
	ctx := testContext(t)
	if _, err := c.Protocol(ctx); err != nil {
		t.Fatal(err)
	}
	if providers, err := c.Providers(ctx, true); err != nil || providers == nil || len(providers) != 0 {
		t.Fatalf("providers %v %v", providers, err)
	}
	if result, err := c.Run(ctx, demo()); err != nil || result.Text != "Hi" {
		t.Fatalf("run %+v %v", result, err)
	}
	var texts []string
	if err := each(c.Stream(ctx, demo()), func(ev Event) error { texts = append(texts, ev.Text); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /prefix/v1/protocol application/json",
		"GET /prefix/v1/providers?refresh=true application/json",
		"POST /prefix/v1/runs application/json",
		"POST /prefix/v1/runs text/event-stream",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s", strings.Join(seen, "\n"))
	}
}

func TestRedirectsAreNeverFollowed(t *testing.T) {
	var targetHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/target/", func(w http.ResponseWriter, r *http.Request) { targetHits.Add(1); writeJSON(w, 200, resultJSON) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/target/", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, err := newTestClient(t, srv.URL).Run(testContext(t), demo())
	expectCode(t, err, CodeHTTPError)
	if targetHits.Load() != 0 {
		t.Fatal("the redirect target was contacted")
	}
}

func TestErrorResponses(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		code      string
		retryable bool
		outcome   string
	}{
		{503, `{"error":{"code":"FUTURE_CODE","message":"later","retryable":true,"outcome":"uncertain","extra":1}}`, "FUTURE_CODE", true, OutcomeUncertain},
		{403, `{"error":{"code":"FORBIDDEN","message":"no","retryable":false}}`, "FORBIDDEN", false, ""},
		{500, `oops`, CodeHTTPError, true, ""},
		{429, `{"error":{"code":"","message":"","retryable":true}}`, CodeHTTPError, true, ""},
		{404, `{"error":{"Code":"NOT_FOUND","message":"x","retryable":false}}`, CodeHTTPError, false, ""},
		{400, `{"error":{"code":"X","message":"x","retryable":false,"outcome":null}}`, CodeHTTPError, false, ""},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.status, c.body) }))
		_, err := newTestClient(t, srv.URL).Run(testContext(t), demo())
		srv.Close()
		var de *DriverError
		if !errors.As(err, &de) || de.Code != c.code || de.Retryable != c.retryable || de.Outcome != c.outcome {
			t.Errorf("%d %s: got %#v", c.status, c.body, err)
		}
	}
}

func TestResponseVersionMustBeOneZero(t *testing.T) {
	for _, versions := range [][]string{{"2.0"}, {"1.0", "1.0"}, {"1.0, 2.0"}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Agenticdriver-Version"] = versions
			w.Write([]byte(resultJSON))
		}))
		_, err := newTestClient(t, srv.URL).Run(testContext(t), demo())
		srv.Close()
		if !isCode(err, CodeUnsupportedProtocolVersion) {
			t.Errorf("%q: %v", versions, err)
		}
	}
	legacy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(resultJSON)) }))
	defer legacy.Close()
	if _, err := newTestClient(t, legacy.URL).Run(testContext(t), demo()); err != nil {
		t.Fatalf("a legacy host without the header: %v", err)
	}
}

func TestJSONBodyBoundsAndEncoding(t *testing.T) {
	padded := `{"runId":"r1","provider":"mock","model":"demo","usage":{},"steps":1,"finishReason":"stop","text":"` +
		strings.Repeat("x", maxJSONBytes) + `"}`
	cases := map[string]string{
		padded:                CodeResponseTooLarge,
		"{\"text\":\"\xff\"}": CodeInvalidResponse,
		resultJSON + " {}":    CodeInvalidResponse,
		strings.Replace(resultJSON, `"runId"`, `"RunID"`, 1):                CodeInvalidResponse,
		strings.Replace(resultJSON, `"model":"demo"`, `"model":"other"`, 1): CodeInvalidResponse,
	}
	for body, code := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) }))
		_, err := newTestClient(t, srv.URL).Run(testContext(t), demo())
		srv.Close()
		if !isCode(err, code) {
			t.Errorf("%.60s: %v, want %s", body, err, code)
		}
	}
}

func TestCaseVariantKeysAreIgnored(t *testing.T) {
	body := strings.Replace(resultJSON, `"text":"Hi"`, `"text":"Hi","Text":"shadow","Session":"ignored","USAGE":5`, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) }))
	defer srv.Close()
	result, err := newTestClient(t, srv.URL).Run(testContext(t), demo())
	if err != nil || result.Text != "Hi" || result.Session != nil {
		t.Fatalf("result %+v, error %v", result, err)
	}
}

func TestGuardRailsSendNothing(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	ctx := testContext(t)
	withTools := demo()
	withTools.ApplicationTools = []ApplicationTool{{Name: "lookup", Description: "d", InputSchema: []byte(`{}`)}}
	_, err := c.Run(ctx, withTools)
	expectCode(t, err, CodeToolStreamRequired)
	withApprovals := demo()
	withApprovals.Approvals = &ApprovalOptions{Mode: "interactive", IdlePolicy: "pause"}
	_, err = c.Run(ctx, withApprovals)
	expectCode(t, err, CodeApprovalStreamRequired)
	if hits.Load() != 0 {
		t.Fatal("a guard rail sent a request")
	}
}

func TestRequestEncodingKeepsAnEmptyToolSelection(t *testing.T) {
	bodies := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- string(body)
		writeJSON(w, 200, resultJSON)
	}))
	defer srv.Close()
	req := demo()
	req.Tools = []string{}
	if _, err := newTestClient(t, srv.URL).Run(testContext(t), req); err != nil {
		t.Fatal(err)
	}
	if got := <-bodies; got != `{"provider":"mock","model":"demo","input":"Hello","tools":[]}` {
		t.Fatalf("body %s", got)
	}
}

func TestTransportFailuresAreTyped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := newTestClient(t, url).Protocol(testContext(t))
	expectCode(t, err, CodeHostUnreachable)
	if errors.Unwrap(err) == nil {
		t.Fatal("the transport error is not kept as the cause")
	}
}

func TestCloseReleasesTheConnectionsTheClientOpened(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"providers":[]}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	client, err := New(srv.URL, testToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Providers(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	client.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the idle keep-alive connection was not closed")
	}
}
