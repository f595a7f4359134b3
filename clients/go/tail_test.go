package agenticdriver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// tailServer is a loopback host for TailJob: POST /v1/jobs/read answers job, and each
// GET of the job's stream is answered by the next script in connections (the last one
// repeats), given the Last-Event-ID the client sent.
type tailServer struct {
	t           *testing.T
	job         map[string]any
	connections []func(w http.ResponseWriter, lastEventID string)
	mu          sync.Mutex
	lastIDs     []string
}

func (s *tailServer) start() *Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/jobs/read":
			writeJSON(w, 200, mustJSON(s.t, s.job))
		case r.Method == http.MethodGet && r.URL.Path == "/v1/jobs/"+testJobID+"/stream":
			if r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Authorization") != "Bearer "+testToken {
				http.Error(w, "bad headers", 400)
				return
			}
			s.mu.Lock()
			s.lastIDs = append(s.lastIDs, r.Header.Get("Last-Event-ID"))
			n := len(s.lastIDs)
			s.mu.Unlock()
			s.connections[min(n, len(s.connections))-1](w, r.Header.Get("Last-Event-ID"))
		default:
			http.NotFound(w, r)
		}
	}))
	s.t.Cleanup(srv.Close)
	return newTestClient(s.t, srv.URL)
}

func (s *tailServer) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lastIDs...)
}

// frames renders events as SSE frames whose id is the sequence.
func frames(events ...map[string]any) string {
	var b strings.Builder
	for _, ev := range events {
		data, _ := json.Marshal(ev)
		fmt.Fprintf(&b, "id: %v\nevent: %v\ndata: %s\n\n", ev["sequence"], ev["type"], data)
	}
	return b.String()
}

// drop answers with the events and then the start of another frame, and closes the
// connection abruptly (a chunked body without its final chunk).
func drop(events ...map[string]any) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, _ string) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		body := frames(events...) + "id: 99\ndata: {\"type\":\"text.de"
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nAgenticDriver-Version: 1.0\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
		buf.Flush()
	}
}

// serve answers with the events as a complete stream.
func serve(events ...map[string]any) func(http.ResponseWriter, string) {
	return func(w http.ResponseWriter, _ string) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("AgenticDriver-Version", "1.0")
		fmt.Fprint(w, ": heartbeat\n\n"+frames(events...))
	}
}

func runningJob() map[string]any {
	return jobJSON(map[string]any{"state": "running", "cursor": 1, "expiresAt": nil})
}

var fastTail = TailOptions{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}

func collectTail(t *testing.T, c *Client, opts TailOptions) ([]int64, error) {
	var seqs []int64
	for ev, err := range c.TailJob(testContext(t), testJobID, opts) {
		if err != nil {
			return seqs, err
		}
		seqs = append(seqs, ev.Sequence)
	}
	return seqs, nil
}

func TestTailJobResumesAfterADroppedConnection(t *testing.T) {
	log := completedLog()
	s := &tailServer{t: t, job: runningJob(), connections: []func(http.ResponseWriter, string){
		drop(log[0], log[1]),
		func(w http.ResponseWriter, last string) {
			if last != "2" {
				http.Error(w, "wrong Last-Event-ID", 400)
				return
			}
			drop(log[2])(w, last)
		},
		serve(log[3]),
	}}
	seqs, err := collectTail(t, s.start(), fastTail)
	if err != nil {
		t.Fatalf("TailJob: %v", err)
	}
	if fmt.Sprint(seqs) != "[1 2 3 4]" {
		t.Errorf("delivered sequences %v, want [1 2 3 4] once each", seqs)
	}
	if got := fmt.Sprint(s.ids()); got != "[0 2 3]" {
		t.Errorf("Last-Event-ID per connection %s, want [0 2 3]", got)
	}
}

func TestTailJobStartsAfterTheGivenSequence(t *testing.T) {
	log := completedLog()
	s := &tailServer{t: t, job: jobJSON(map[string]any{"state": "running", "cursor": 2, "expiresAt": nil}),
		connections: []func(http.ResponseWriter, string){serve(log[2:]...)}}
	seqs, err := collectTail(t, s.start(), TailOptions{After: 2})
	if err != nil || fmt.Sprint(seqs) != "[3 4]" || fmt.Sprint(s.ids()) != "[2]" {
		t.Fatalf("got %v %v, Last-Event-ID %v", seqs, err, s.ids())
	}
}

func TestTailJobResetsItsAttemptsAfterProgress(t *testing.T) {
	log := completedLog()
	// Every connection delivers one event and drops: more drops than MaxAttempts, but
	// each attempt made progress.
	s := &tailServer{t: t, job: runningJob(), connections: []func(http.ResponseWriter, string){
		drop(log[0]), drop(log[1]), drop(log[2]), drop(log[3]),
	}}
	seqs, err := collectTail(t, s.start(), TailOptions{MaxAttempts: 2, InitialBackoff: time.Millisecond})
	if err != nil || fmt.Sprint(seqs) != "[1 2 3 4]" {
		t.Fatalf("got %v, %v", seqs, err)
	}
}

func TestTailJobGivesUpAfterMaxAttempts(t *testing.T) {
	log := completedLog()
	s := &tailServer{t: t, job: runningJob(), connections: []func(http.ResponseWriter, string){
		drop(log[0]),
		drop(), // from here on every attempt fails without an event
	}}
	seqs, err := collectTail(t, s.start(), fastTail)
	de := expectCode(t, err, CodeJobStreamLost)
	if !de.Retryable || de.Unwrap() == nil || !isCode(de.Unwrap(), CodeIncompleteStream) && !isCode(de.Unwrap(), CodeHostUnreachable) {
		t.Errorf("JOB_STREAM_LOST should wrap the last failure: %#v", de)
	}
	if fmt.Sprint(seqs) != "[1]" || fmt.Sprint(s.ids()) != "[0 1 1 1]" {
		t.Errorf("delivered %v, Last-Event-ID %v (want [1] and one try plus 3 failed attempts)", seqs, s.ids())
	}

	busy := &tailServer{t: t, job: runningJob(), connections: []func(http.ResponseWriter, string){
		func(w http.ResponseWriter, _ string) {
			writeJSON(w, 503, `{"error":{"code":"HOST_STARTING","message":"starting","retryable":true}}`)
		},
	}}
	_, err = collectTail(t, busy.start(), fastTail)
	if de := expectCode(t, err, CodeJobStreamLost); !isCode(de.Unwrap(), "HOST_STARTING") || len(busy.ids()) != 3 {
		t.Errorf("retryable host error: %v after %d attempts", err, len(busy.ids()))
	}
}

func TestTailJobStopsAtFinalErrors(t *testing.T) {
	log := completedLog()
	replay := func(w http.ResponseWriter, last string) { serve(log...)(w, last) } // ignores Last-Event-ID
	cases := []struct {
		name        string
		connections []func(http.ResponseWriter, string)
		code        string
		attempts    int
	}{
		{"replayed events after a drop", []func(http.ResponseWriter, string){drop(log[0], log[1]), replay}, CodeInvalidStream, 2},
		{"frame id is not the sequence", []func(http.ResponseWriter, string){func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "text/event-stream")
			data, _ := json.Marshal(log[0])
			fmt.Fprintf(w, "id: 7\ndata: %s\n\n", data)
		}}, CodeInvalidStream, 1},
		{"another run", []func(http.ResponseWriter, string){serve(jobEvent(1, "run.started", map[string]any{"provider": "mock", "model": "demo", "runId": "00000000-0000-4000-8000-000000000003"}))}, CodeInvalidStream, 1},
		{"tool execution event", []func(http.ResponseWriter, string){serve(log[0], jobEvent(2, "tool.execution.requested", map[string]any{"execution": map[string]any{
			"executionId": "e", "runId": testJobRunID, "call": map[string]any{"id": "c", "name": "t", "arguments": map[string]any{}}}}))}, CodeInvalidStream, 1},
		{"unknown optional event", []func(http.ResponseWriter, string){serve(log[0], jobEvent(2, "future.event", map[string]any{"optional": true}))}, CodeUnsupportedEvent, 1},
		{"job not found", []func(http.ResponseWriter, string){func(w http.ResponseWriter, _ string) {
			writeJSON(w, 404, `{"error":{"code":"JOB_NOT_FOUND","message":"no such job","retryable":false}}`)
		}}, "JOB_NOT_FOUND", 1},
	}
	for _, c := range cases {
		s := &tailServer{t: t, job: runningJob(), connections: c.connections}
		_, err := collectTail(t, s.start(), fastTail)
		if !isCode(err, c.code) || len(s.ids()) != c.attempts {
			t.Errorf("%s: got %v after %d connections, want %s after %d", c.name, err, len(s.ids()), c.code, c.attempts)
		}
	}
}

func TestTailJobOfAFinishedJob(t *testing.T) {
	s := &tailServer{t: t, job: jobJSON(nil), connections: []func(http.ResponseWriter, string){serve()}}
	client := s.start()
	seqs, err := collectTail(t, client, TailOptions{After: 4})
	if err != nil || len(seqs) != 0 || len(s.ids()) != 0 {
		t.Errorf("a job finished at After: %v %v, %d connections", seqs, err, len(s.ids()))
	}
	if _, err := collectTail(t, client, TailOptions{After: 5}); !isCode(err, CodeInvalidArgument) {
		t.Errorf("After beyond the cursor: %v", err)
	}
}

func TestTailJobLeavingTheLoopStopsReading(t *testing.T) {
	log := completedLog()
	s := &tailServer{t: t, job: runningJob(), connections: []func(http.ResponseWriter, string){serve(log...)}}
	client := s.start()
	var got []int64
	for ev, err := range client.TailJob(t.Context(), testJobID, fastTail) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Sequence)
		break
	}
	if fmt.Sprint(got) != "[1]" || len(s.ids()) != 1 {
		t.Errorf("got %v after %d connections", got, len(s.ids()))
	}
}
