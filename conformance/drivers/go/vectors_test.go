package conformance_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"testing"

	agenticdriver "github.com/agenticdriver/agenticdriver/clients/go"
)

// vectorCase holds the fields of a conformance.json case this driver uses.
type vectorCase struct {
	ID                   string                              `json:"id"`
	Operation            string                              `json:"operation"`
	ExpectedError        string                              `json:"expectedError"`
	ExpectTransportError bool                                `json:"expectTransportError"`
	Cancel               bool                                `json:"cancel"`
	Approvals            *agenticdriver.ApprovalOptions      `json:"approvals"`
	Session              *agenticdriver.SessionBinding       `json:"session"`
	ApplicationTools     []agenticdriver.ApplicationTool     `json:"applicationTools"`
	Tools                []string                            `json:"tools"`
	Retrieval            *agenticdriver.RetrievalOptions     `json:"retrieval"`
	Decision             agenticdriver.ApprovalDecision      `json:"decision"`
	ToolResult           agenticdriver.ToolExecutionResult   `json:"toolResult"`
	ToolIdentity         agenticdriver.ToolExecutionIdentity `json:"toolIdentity"`
	SessionCreate        agenticdriver.SessionCreate         `json:"sessionCreate"`
	SessionIdentity      agenticdriver.SessionIdentity       `json:"sessionIdentity"`
	JobSubmit            agenticdriver.JobSubmit             `json:"jobSubmit"`
	JobIdentity          agenticdriver.JobIdentity           `json:"jobIdentity"`
	JobEvents            agenticdriver.JobEventsRequest      `json:"jobEvents"`
	RunIdentity          agenticdriver.RunReadRequest        `json:"runIdentity"`
	RunEvents            agenticdriver.RunEventsRequest      `json:"runEvents"`
}

type versioningCase struct {
	ID            string   `json:"id"`
	ExpectedTypes []string `json:"expectedTypes"`
	ExpectedError string   `json:"expectedError"`
	Retryable     *bool    `json:"retryable"`
}

type skipList struct {
	Operations map[string]string `json:"operations"`
	Cases      map[string]string `json:"cases"`
}

func (s skipList) skips(c vectorCase) bool {
	_, byOperation := s.Operations[c.Operation]
	_, byID := s.Cases[c.ID]
	return (c.Operation != "" && byOperation) || byID
}

func readJSONFile(t *testing.T, path string, out any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}

// each drains a stream: fn sees every event; fn's error stops the stream (closing the
// connection) and is returned; a run.failed or run.cancelled comes back as its error.
func each(events iter.Seq2[agenticdriver.Event, error], fn func(agenticdriver.Event) error) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(ev); err != nil {
				return err
			}
		}
		if ev.Terminal() && ev.Error != nil {
			failure := *ev.Error
			return &failure
		}
	}
	return nil
}

// runBaseURLs makes a client with each URL of protocol/fixtures/base-url.json: it must be
// refused with the case's code, or made (no request is sent).
func (h *harness) runBaseURLs(t *testing.T, r *report) {
	var vectors struct {
		Token string `json:"token"`
		Cases []struct {
			ID            string `json:"id"`
			URL           string `json:"url"`
			ExpectedError string `json:"expectedError"`
		} `json:"cases"`
	}
	readJSONFile(t, h.baseURLs, &vectors)
	for _, c := range vectors.Cases {
		_, err := agenticdriver.New(c.URL, vectors.Token)
		var got string
		var de *agenticdriver.DriverError
		if errors.As(err, &de) {
			got = de.Code
		} else if err != nil {
			got = err.Error()
		}
		var problem error
		if got != c.ExpectedError {
			problem = fmt.Errorf("%s: expected %q, got %q", c.URL, c.ExpectedError, got)
		}
		r.record(t, "base-url:"+c.ID, problem)
	}
}
