// Package conformance_test is the Go driver of the cross-language conformance harness
// (conformance/CONTRACT.md). It runs only when the harness provides its environment.
package conformance_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	agenticdriver "github.com/agenticdriver/agenticdriver/clients/go"
)

const caseTimeout = 30 * time.Second

type report struct {
	Language  string    `json:"language"`
	Mode      string    `json:"mode"`
	Transport string    `json:"transport"`
	Passed    int       `json:"passed"`
	Failed    int       `json:"failed"`
	Skipped   int       `json:"skipped"`
	Failures  []failure `json:"failures"`
}

type failure struct {
	ID     string `json:"id"`
	Detail string `json:"detail"`
}

func (r *report) record(t *testing.T, id string, err error) {
	if err == nil {
		r.Passed++
		return
	}
	r.Failed++
	r.Failures = append(r.Failures, failure{ID: id, Detail: err.Error()})
	t.Errorf("%s: %v", id, err)
}

// harness is the environment the conformance runner hands every driver.
type harness struct {
	transport, referenceURL, liveURL string
	token, restrictedToken           string
	untrustedURL, mismatchURL        string
	fixtures, versioning, skip       string
	baseURLs                         string
	options                          []agenticdriver.Option
	tlsConfig                        *tls.Config
}

func loadHarness(t *testing.T) *harness {
	h := &harness{
		transport:       os.Getenv("AGENTICDRIVER_TEST_TRANSPORT"),
		referenceURL:    os.Getenv("AGENTICDRIVER_TEST_REFERENCE_URL"),
		liveURL:         os.Getenv("AGENTICDRIVER_TEST_URL"),
		token:           os.Getenv("AGENTICDRIVER_TEST_TOKEN"),
		restrictedToken: os.Getenv("AGENTICDRIVER_TEST_RESTRICTED_TOKEN"),
		untrustedURL:    os.Getenv("AGENTICDRIVER_TEST_UNTRUSTED_URL"),
		mismatchURL:     os.Getenv("AGENTICDRIVER_TEST_MISMATCH_URL"),
		fixtures:        os.Getenv("AGENTICDRIVER_TEST_FIXTURES"),
		versioning:      os.Getenv("AGENTICDRIVER_TEST_VERSIONING"),
		skip:            os.Getenv("AGENTICDRIVER_TEST_SKIP"),
		baseURLs:        os.Getenv("AGENTICDRIVER_TEST_BASE_URLS"),
	}
	if h.transport == "https" {
		pem, err := os.ReadFile(os.Getenv("AGENTICDRIVER_TEST_CA_FILE"))
		if err != nil {
			t.Fatalf("read CA: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatal("the CA file holds no certificate")
		}
		h.tlsConfig = &tls.Config{RootCAs: pool}
		h.options = []agenticdriver.Option{agenticdriver.WithTLSConfig(h.tlsConfig)}
	}
	return h
}

func (h *harness) client(baseURL, token string) (*agenticdriver.Client, error) {
	return agenticdriver.New(baseURL, token, h.options...)
}

func TestConformance(t *testing.T) {
	if os.Getenv("AGENTICDRIVER_TEST_TRANSPORT") == "" {
		t.Skip("run by the conformance harness (npx tsx conformance/run.ts --language go)")
	}
	h := loadHarness(t)
	logf = t.Logf
	r := &report{Language: "go", Mode: "default", Transport: h.transport, Failures: []failure{}}
	h.runVectors(t, r)
	h.runVersioning(t, r)
	h.runBaseURLs(t, r)
	h.runLive(t, r)
	line, _ := json.Marshal(map[string]any{"conformance": r})
	if path := os.Getenv("AGENTICDRIVER_GO_REPORT"); path != "" {
		if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
			t.Fatalf("write report: %v", err)
		}
	} else {
		fmt.Println(string(line))
	}
}

func (h *harness) runVectors(t *testing.T, r *report) {
	var vectors struct {
		Cases []vectorCase `json:"cases"`
	}
	var skip skipList
	readJSONFile(t, h.fixtures, &vectors)
	readJSONFile(t, h.skip, &skip)
	for _, c := range vectors.Cases {
		if skip.skips(c) {
			r.Skipped++
			continue
		}
		r.record(t, c.ID, h.runCase(c))
	}
}

func (h *harness) runCase(c vectorCase) error {
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	client, err := h.client(h.referenceURL+"/fixtures/"+url.PathEscape(c.ID)+"/", h.token)
	if err != nil {
		return err
	}
	switch c.Operation {
	case "":
		before, metricsErr := h.peerCancelled(ctx)
		if err = streamCase(ctx, client, c); err == nil && c.Cancel {
			err = errors.Join(metricsErr, h.waitForPeerCancel(ctx, before))
		}
	case "providers":
		_, err = client.Providers(ctx, false)
	case "protocol":
		_, err = client.Protocol(ctx)
	case "approval":
		_, err = client.DecideApproval(ctx, c.Decision)
	case "tool-progress":
		_, err = client.ReportToolProgress(ctx, c.ToolIdentity)
	case "tool-result":
		_, err = client.CompleteTool(ctx, c.ToolResult)
	case "session-create":
		_, err = client.CreateSession(ctx, c.SessionCreate)
	case "session-read":
		_, err = client.ReadSession(ctx, c.SessionIdentity.ID)
	case "session-delete":
		_, err = client.DeleteSession(ctx, c.SessionIdentity.ID)
	case "job-submit":
		_, err = client.SubmitJob(ctx, c.JobSubmit)
	case "job-read":
		_, err = client.ReadJob(ctx, c.JobIdentity.ID)
	case "job-cancel":
		_, err = client.CancelJob(ctx, c.JobIdentity.ID)
	case "job-events":
		_, err = client.JobEvents(ctx, c.JobEvents)
	case "run-read":
		_, err = client.ReadRun(ctx, c.RunIdentity.RunID)
	case "run-events":
		_, err = client.RunEvents(ctx, c.RunEvents)
	case "ingest":
		_, err = client.IngestDocument(ctx, ingestRequest)
	default:
		return fmt.Errorf("operation %q is not supported by the Go driver", c.Operation)
	}
	if err != nil {
		logf("%s: %v", c.ID, err)
	}
	return expectOutcome(err, c.ExpectedError, c.ExpectTransportError)
}

var logf = func(string, ...any) {}

// ingestRequest is the document every ingest case sends (CONTRACT.md); the peer answers
// the case's receipt.
var ingestRequest = agenticdriver.IngestRequest{Corpus: "library", Document: agenticdriver.IngestDocument{
	Type: "text", Source: agenticdriver.ContextSource{ID: "paper", Revision: "r1"}, MediaType: "text/markdown", Text: "# Paper\n\nA short paper.\n",
}}

func streamCase(ctx context.Context, client *agenticdriver.Client, c vectorCase) error {
	req := agenticdriver.RunRequest{Provider: "mock", Model: "demo", Input: "Hello",
		Approvals: c.Approvals, Session: c.Session, ApplicationTools: c.ApplicationTools,
		Tools: c.Tools, Retrieval: c.Retrieval}
	errStop := errors.New("stopped after the first event")
	var text string
	err := each(client.Stream(ctx, req), func(ev agenticdriver.Event) error {
		if c.Cancel {
			return errStop
		}
		if ev.Type == agenticdriver.EventRunCompleted {
			text = ev.Result.Text
		}
		return nil
	})
	switch {
	case c.Cancel && errors.Is(err, errStop):
		return nil // runCase then waits for the peer to count the close
	case c.Cancel && err == nil:
		return errors.New("the held-open stream ended by itself")
	case err != nil:
		return err
	case text != "Hello 🌍":
		return fmt.Errorf("result text %q, want %q", text, "Hello 🌍")
	}
	return nil
}

// expectOutcome compares a call's error with the case's expectation.
func expectOutcome(err error, expectedCode string, transportError bool) error {
	var de *agenticdriver.DriverError
	switch {
	case transportError:
		if err == nil {
			return errors.New("expected a transport failure, the call succeeded")
		}
		return nil
	case expectedCode == "":
		return err
	case errors.As(err, &de) && de.Code == expectedCode:
		return nil
	case err == nil:
		return fmt.Errorf("expected %s, the call succeeded", expectedCode)
	}
	return fmt.Errorf("expected %s, got %v", expectedCode, err)
}

func (h *harness) runVersioning(t *testing.T, r *report) {
	var vectors struct {
		Cases []versioningCase `json:"cases"`
	}
	readJSONFile(t, h.versioning, &vectors)
	for _, c := range vectors.Cases {
		r.record(t, "versioning:"+c.ID, h.versioningCase(c))
	}
}

func (h *harness) versioningCase(c versioningCase) error {
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	client, err := h.client(h.referenceURL+"/versioning/"+url.PathEscape(c.ID)+"/", h.token)
	if err != nil {
		return err
	}
	var types []string
	err = each(client.Stream(ctx, agenticdriver.RunRequest{Provider: "mock", Model: "demo", Input: "Hello"}),
		func(ev agenticdriver.Event) error { types = append(types, ev.Type); return nil })
	if outcome := expectOutcome(err, c.ExpectedError, false); outcome != nil {
		return outcome
	}
	var de *agenticdriver.DriverError
	if c.Retryable != nil && errors.As(err, &de) && de.Retryable != *c.Retryable {
		return fmt.Errorf("retryable = %v, want %v", de.Retryable, *c.Retryable)
	}
	if c.ExpectedError == "" && fmt.Sprint(types) != fmt.Sprint(c.ExpectedTypes) {
		return fmt.Errorf("delivered %v, want %v", types, c.ExpectedTypes)
	}
	return nil
}

// rawTransport trusts the harness CA for the driver's own metric requests.
func (h *harness) rawTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = h.tlsConfig
	return t
}

// peerCancelled reads how many held-open cancel streams the peer saw closed.
func (h *harness) peerCancelled(ctx context.Context) (int, error) {
	return h.readCount(ctx, h.referenceURL+"/metrics", "cancelled")
}

func (h *harness) waitForPeerCancel(ctx context.Context, before int) error {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if after, err := h.peerCancelled(ctx); err != nil || after > before {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("the peer did not see the stream closed within 5 s")
}

// readCount reads one numeric field of a harness metrics document.
func (h *harness) readCount(ctx context.Context, metricsURL, key string) (int, error) {
	client := &http.Client{Transport: h.rawTransport()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var metrics map[string]json.RawMessage
	var count int
	if json.Unmarshal(body, &metrics) != nil || json.Unmarshal(metrics[key], &count) != nil {
		return 0, fmt.Errorf("%s answered %d %s", metricsURL, resp.StatusCode, body)
	}
	return count, nil
}
