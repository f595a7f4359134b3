package agenticdriver

// Property tests and fuzz targets for the SSE reader and the submission checks that run
// before a request is sent (DecideApproval, ReportToolProgress, CompleteTool).
//
// Streams come from a model (frames of data lines, comments, other fields, blank lines,
// any line ending per line, an optional BOM) drawn from a byte string: random bytes in
// the Test* properties (AGENTICDRIVER_PROPERTY_RUNS cases, default 300), the fuzzer's
// bytes in the Fuzz* targets, which conformance/drivers/go/run runs for a bounded time.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

func propertyRuns(t testing.TB) int {
	if raw := os.Getenv("AGENTICDRIVER_PROPERTY_RUNS"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			t.Fatalf("AGENTICDRIVER_PROPERTY_RUNS=%q is not a positive count", raw)
		}
		return n
	}
	return 300
}

// choices draws decisions from a byte string (0 once it is used up), so a fuzzer's
// mutations of the bytes are mutations of the generated value.
type choices struct{ b []byte }

func (c *choices) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	if n > 256 && len(c.b) > 0 {
		v = v<<8 | int(c.b[0])
		c.b = c.b[1:]
	}
	return v % n
}

// Pieces of line text: ASCII, the colon and space that matter to fields, multi-byte
// characters (so reads split UTF-8 sequences) and a BOM character inside a line.
var textPieces = []string{"a", "Z", "0", " ", ":", "data", "{", "\"", "é", "🌍", "\uFEFF", "\t"}

func (c *choices) text() string {
	var b strings.Builder
	for n := c.intn(7); n > 0; n-- {
		b.WriteString(textPieces[c.intn(len(textPieces))])
	}
	return b.String()
}

type sseLine struct {
	text    string
	data    string
	hasData bool
}

type sseModel struct {
	bom    bool
	frames [][]sseLine
	gaps   []int
}

var ignoredFields = []string{"event", "id", "retry", "Data", "DATA", "datum", "data ", "dat", "x-data"}

func (c *choices) line() sseLine {
	switch c.intn(9) {
	case 0, 1:
		v := c.text()
		return sseLine{text: "data: " + v, data: v, hasData: true}
	case 2:
		v := strings.TrimLeft(c.text(), " ")
		return sseLine{text: "data:" + v, data: v, hasData: true}
	case 3:
		return sseLine{text: "data", hasData: true} // a bare field name: an empty data line
	case 4:
		return sseLine{text: "data:", hasData: true}
	case 5:
		return sseLine{text: ":" + c.text()} // comment
	case 6:
		return sseLine{text: ": heartbeat"}
	case 7:
		return sseLine{text: ignoredFields[c.intn(len(ignoredFields))] + ":" + c.text()}
	default:
		return sseLine{text: []string{"event", "id", "datax", "data-"}[c.intn(4)]}
	}
}

func (c *choices) model() sseModel {
	m := sseModel{bom: c.intn(2) == 1}
	for n := c.intn(6); n > 0; n-- {
		var frame []sseLine
		for k := c.intn(6); k > 0; k-- {
			frame = append(frame, c.line())
		}
		m.frames = append(m.frames, frame)
		m.gaps = append(m.gaps, c.intn(3))
	}
	return m
}

func (m sseModel) expected() []string {
	var frames []string
	for _, frame := range m.frames {
		var data []string
		for _, l := range frame {
			if l.hasData {
				data = append(data, l.data)
			}
		}
		if data != nil {
			frames = append(frames, strings.Join(data, "\n"))
		}
	}
	return frames
}

// serialise writes the model with ending(i) after line i. A CR followed by a blank line
// ending in LF would read as one CRLF, so that LF becomes CRLF.
func (m sseModel) serialise(ending func(int) string) []byte {
	var lines []string
	for i, frame := range m.frames {
		for _, l := range frame {
			lines = append(lines, l.text)
		}
		for k := 0; k <= m.gaps[i]; k++ {
			lines = append(lines, "")
		}
	}
	var b bytes.Buffer
	if m.bom {
		b.Write(utf8BOM)
	}
	previous := ""
	for i, l := range lines {
		end := ending(i)
		if previous == "\r" && l == "" && end == "\n" {
			end = "\r\n"
		}
		b.WriteString(l + end)
		previous = end
	}
	return b.Bytes()
}

var lineEndings = []string{"\n", "\r\n", "\r"}

// piecesReader returns data in reads of the given sizes (cycled), including empty reads.
type piecesReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *piecesReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	size := 1 << 20
	if len(r.sizes) > 0 {
		size = r.sizes[r.i%len(r.sizes)]
		r.i++
	}
	n := min(size, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func readPieces(data []byte, sizes []int) ([]string, string) {
	s := newSSEReader(&piecesReader{data: data, sizes: sizes})
	var frames []string
	for {
		frame, err := s.next()
		if err == io.EOF {
			return frames, ""
		}
		var de *DriverError
		if errors.As(err, &de) {
			return frames, de.Code
		}
		if err != nil {
			return frames, "untyped: " + err.Error()
		}
		frames = append(frames, string(frame))
	}
}

func (c *choices) sizes() []int {
	var sizes []int
	for n := c.intn(6); n > 0; n-- {
		sizes = append(sizes, c.intn(9)) // 0: an empty read
	}
	if len(sizes) > 0 && slices.Max(sizes) == 0 {
		sizes = append(sizes, 1)
	}
	return sizes
}

// checkModelStream is the stream property: whatever the line endings, chunking, BOM and
// inserted comments, the reader yields exactly the model's frames and ends cleanly.
func checkModelStream(t *testing.T, seed []byte) {
	c := &choices{b: seed}
	m := c.model()
	var endings []string
	for n := 1 + c.intn(4); n > 0; n-- {
		endings = append(endings, lineEndings[c.intn(3)])
	}
	sizes := c.sizes()
	want := m.expected()
	body := m.serialise(func(i int) string { return endings[i%len(endings)] })
	for _, s := range [][]int{nil, sizes, {1}} {
		if got, code := readPieces(body, s); code != "" || !slices.Equal(got, want) {
			t.Fatalf("body %q in reads %v: frames %q, error %q; want %q", body, s, got, code, want)
		}
	}
	// The same stream with one ending throughout, and with the BOM toggled.
	for _, end := range lineEndings {
		for _, bom := range []bool{false, true} {
			variant := m
			variant.bom = bom
			body := variant.serialise(func(int) string { return end })
			if got, code := readPieces(body, sizes); code != "" || !slices.Equal(got, want) {
				t.Fatalf("ending %q bom %v: body %q: frames %q, error %q; want %q", end, bom, body, got, code, want)
			}
		}
	}
}

func randomSeed(r *rand.Rand) []byte {
	seed := make([]byte, r.IntN(200))
	for i := range seed {
		seed[i] = byte(r.Uint32())
	}
	return seed
}

func TestPropertySSEModelStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	for i := propertyRuns(t); i > 0; i-- {
		checkModelStream(t, randomSeed(r))
	}
}

func FuzzSSEModel(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 3, 0, 2, 3, 4, 1})
	f.Add([]byte("any bytes become a stream model"))
	f.Fuzz(checkModelStream)
}

// Arbitrary bytes: only typed errors, the same outcome for any reads, frames within bounds.
func checkArbitraryBytes(t *testing.T, data []byte, sizes []int) {
	whole, wholeCode := readPieces(data, nil)
	split, splitCode := readPieces(data, sizes)
	if strings.HasPrefix(wholeCode, "untyped") || strings.HasPrefix(splitCode, "untyped") {
		t.Fatalf("an untyped error: %q / %q", wholeCode, splitCode)
	}
	if wholeCode != splitCode || !slices.Equal(whole, split) {
		t.Fatalf("reads %v changed the result: %q %q vs %q %q", sizes, whole, wholeCode, split, splitCode)
	}
	for _, frame := range whole {
		if len(frame) > MaxEventBytes || !utf8.ValidString(frame) {
			t.Fatalf("a frame of %d bytes, valid UTF-8 %v", len(frame), utf8.ValidString(frame))
		}
	}
}

func TestPropertySSEArbitraryBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 2))
	alphabet := [][]byte{[]byte("data"), []byte(":"), []byte(" "), []byte("\r"), []byte("\n"), utf8BOM, []byte("x"), []byte("é"), {0xff}, {0xf0, 0x9f}}
	for i := propertyRuns(t) * 3; i > 0; i-- {
		var data []byte
		if i%2 == 0 {
			data = randomSeed(r)
		} else {
			for n := r.IntN(40); n > 0; n-- {
				data = append(data, alphabet[r.IntN(len(alphabet))]...)
			}
		}
		checkArbitraryBytes(t, data, (&choices{b: randomSeed(r)}).sizes())
	}
}

// Regression: a body that is only a BOM is an empty stream, like an empty body; it was
// reported as INCOMPLETE_STREAM.
func TestSSEBodyOfOnlyABOMIsEmpty(t *testing.T) {
	for _, sizes := range [][]int{nil, {1}, {2, 1}} {
		if frames, code := readPieces(utf8BOM, sizes); code != "" || len(frames) != 0 {
			t.Fatalf("reads %v: frames %q, error %q; want a clean empty stream", sizes, frames, code)
		}
	}
	// Two bytes of a BOM are not a BOM: an unfinished line.
	if _, code := readPieces(utf8BOM[:2], nil); code != CodeIncompleteStream {
		t.Fatalf("a partial BOM: %q, want INCOMPLETE_STREAM", code)
	}
	// The BOM is dropped once: a second one is content, so the field is not "data".
	if frames, code := readPieces([]byte("\uFEFF\uFEFFdata: x\n\n"), []int{1}); code != "" || len(frames) != 0 {
		t.Fatalf("a second BOM: frames %q, error %q", frames, code)
	}
}

// --- Submissions: checked before anything is sent ---

// recordingTransport answers every request 429 BUSY and keeps the bodies it was sent.
type recordingTransport struct {
	bodies [][]byte
	count  atomic.Int32
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.count.Add(1)
	body, _ := io.ReadAll(r.Body)
	rt.bodies = append(rt.bodies, body)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("AgenticDriver-Version", "1.0")
	return &http.Response{StatusCode: 429, Status: "429 Too Many Requests", Header: h, Request: r,
		Body: io.NopCloser(strings.NewReader(`{"error":{"code":"BUSY","message":"busy","retryable":true}}`))}, nil
}

func propertyClient(t testing.TB) (*Client, *recordingTransport) {
	rt := &recordingTransport{}
	c, err := New("http://127.0.0.1:9", testToken, WithTransport(rt))
	if err != nil {
		t.Fatal(err)
	}
	return c, rt
}

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)

// The oracle, written from the wire contract rather than from the client's rules.
func idOK(s string) bool {
	n := utf8.RuneCountInString(s)
	return utf8.ValidString(s) && n >= 1 && n <= 256
}

// plainOK: valid UTF-8 JSON whose every value is at most 64 levels below the root and
// has no "__proto__" key.
func plainOK(raw []byte) bool {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return false
	}
	// Numbers as text: the host parses 1e999 too (JSON allows any magnitude).
	v, err := decodeNumbers(raw)
	if err != nil {
		return false
	}
	var walk func(any, int) bool
	walk = func(v any, depth int) bool {
		if depth > 64 {
			return false
		}
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == "__proto__" || !walk(child, depth+1) {
					return false
				}
			}
		case []any:
			for _, child := range v {
				if !walk(child, depth+1) {
					return false
				}
			}
		}
		return true
	}
	return walk(v, 0)
}

func decisionOK(d ApprovalDecision) bool {
	if !idOK(d.ApprovalID) || !idOK(d.RunID) || !idOK(d.Call.ID) || !toolNamePattern.MatchString(d.Call.Name) ||
		d.Call.Arguments == nil || (d.Decision != DecisionApprove && d.Decision != DecisionDeny && d.Decision != DecisionCancel) {
		return false
	}
	for key, value := range d.Call.Arguments {
		// The argument value sits one level below the arguments object.
		if !utf8.ValidString(key) || key == "__proto__" || !plainOK(value) || !plainOK(nestOnce(value)) {
			return false
		}
	}
	return true
}

// nestOnce wraps a JSON value in an array: one level deeper, same content.
func nestOnce(raw []byte) []byte { return append(append([]byte("["), raw...), ']') }

func resultOK(r ToolExecutionResult) bool {
	id := r.ToolExecutionIdentity
	if !idOK(id.ExecutionID) || !idOK(id.RunID) || !idOK(id.CallID) {
		return false
	}
	if len(r.Output) > 0 {
		return r.Error == "" && plainOK(r.Output)
	}
	return r.Error == applicationToolFailed
}

// checkSubmission asserts: refused with code and nothing sent when the oracle says
// invalid; otherwise sent once (the scripted host answers BUSY) with the same content.
func checkSubmission(t *testing.T, ok bool, code string, sent func(*Client) error, want any) bool {
	t.Helper()
	c, rt := propertyClient(t)
	err := sent(c)
	if !ok {
		if !isCode(err, code) || rt.count.Load() != 0 {
			t.Fatalf("invalid %+v: %v with %d requests, want %s and none", want, err, rt.count.Load(), code)
		}
		return false
	}
	if !isCode(err, "BUSY") || rt.count.Load() != 1 {
		t.Fatalf("valid %+v: %v with %d requests, want it sent once", want, err, rt.count.Load())
	}
	wantJSON, _ := json.Marshal(want)
	a, errA := decodeNumbers(rt.bodies[0])
	b, errB := decodeNumbers(wantJSON)
	if errA != nil || errB != nil || !jsonEqual(a, b) {
		t.Fatalf("sent %s, want %s", rt.bodies[0], wantJSON)
	}
	return true
}

func decodeNumbers(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

var rawValues = []string{`1`, `"x"`, `null`, `{}`, `[]`, `{"a":[1,{"b":null}]}`, `{"__proto__":1}`, `{`, "\"\xff\"", `1e999`, `-0`,
	strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65), `"\u005f_proto__"`, ` 2 `}

func (c *choices) id() string {
	switch c.intn(12) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("é", 256) // 256 runes, 512 bytes
	case 2:
		return strings.Repeat("r", 257)
	case 3:
		return "a\xff"
	default:
		return c.text() + "id"
	}
}

func (c *choices) decision() ApprovalDecision {
	d := ApprovalDecision{ApprovalID: c.id(), RunID: c.id(),
		Call:     ToolCall{ID: c.id(), Name: []string{"lookup", "_x9", "lookup", strings.Repeat("n", 64), "9bad", "bad-name", "", strings.Repeat("n", 65)}[c.intn(8)]},
		Decision: []string{DecisionApprove, DecisionDeny, DecisionCancel, DecisionApprove, DecisionDeny, DecisionCancel, "Approve", ""}[c.intn(8)]}
	if c.intn(5) > 0 {
		d.Call.Arguments = map[string]json.RawMessage{}
		for n := c.intn(3); n > 0; n-- {
			d.Call.Arguments[[]string{"q", "__proto__", "a b", ""}[c.intn(4)]] = json.RawMessage(rawValues[c.intn(len(rawValues))])
		}
	}
	return d
}

func (c *choices) result() ToolExecutionResult {
	r := ToolExecutionResult{ToolExecutionIdentity: ToolExecutionIdentity{ExecutionID: c.id(), RunID: c.id(), CallID: c.id()}}
	switch c.intn(4) {
	case 0:
		r.Error = []string{applicationToolFailed, "OTHER", ""}[c.intn(3)]
	case 1:
		r.Output = json.RawMessage(rawValues[c.intn(len(rawValues))])
		r.Error = applicationToolFailed
	default:
		r.Output = json.RawMessage(rawValues[c.intn(len(rawValues))])
	}
	return r
}

// checkSubmissions returns how many of its three submissions were valid (and sent).
func checkSubmissions(t *testing.T, seed []byte) (sent int) {
	c := &choices{b: seed}
	d := c.decision()
	count := func(ok bool) {
		if ok {
			sent++
		}
	}
	count(checkSubmission(t, decisionOK(d), CodeInvalidApproval, func(cl *Client) error { _, err := cl.DecideApproval(context.Background(), d); return err }, d))
	r := c.result()
	count(checkSubmission(t, resultOK(r), CodeInvalidToolExecution, func(cl *Client) error { _, err := cl.CompleteTool(context.Background(), r); return err }, r))
	id := r.ToolExecutionIdentity
	count(checkSubmission(t, idOK(id.ExecutionID) && idOK(id.RunID) && idOK(id.CallID), CodeInvalidToolExecution,
		func(cl *Client) error { _, err := cl.ReportToolProgress(context.Background(), id); return err }, id))
	return sent
}

func TestPropertySubmissions(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 3))
	runs, sent := propertyRuns(t), 0
	for i := runs; i > 0; i-- {
		sent += checkSubmissions(t, randomSeed(r))
	}
	// The generator must reach both sides of each check, not only refusals.
	if sent < runs/4 || sent > 3*runs*3/4 {
		t.Fatalf("%d of %d generated submissions were valid: the generator is lopsided", sent, 3*runs)
	}
	t.Logf("%d of %d generated submissions were valid", sent, 3*runs)
}

func FuzzSubmissions(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 5, 5, 0, 0, 1, 1, 0, 2, 5, 5, 5, 2, 5})
	f.Fuzz(func(t *testing.T, seed []byte) { checkSubmissions(t, seed) })
}

// --- The whole stream path: Client.Stream over a body, decoder and event rules ---

// bodyTransport answers every request with the given event-stream body in reads of the
// given sizes.
type bodyTransport struct {
	body  []byte
	sizes []int
}

func (rt bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	h.Set("AgenticDriver-Version", "1.0")
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: h, Request: r,
		Body: io.NopCloser(&piecesReader{data: rt.body, sizes: rt.sizes})}, nil
}

var streamCodes = []string{CodeInvalidStream, CodeIncompleteStream, CodeResponseTooLarge, CodeUnsupportedEvent}

// checkStreamPath: a valid run (with comments and unfamiliar optional events) is delivered
// whole; the same run with damaged bytes or cut short ends in a typed stream error (or,
// when the damage missed, as a run), never in another error or a panic.
func checkStreamPath(t *testing.T, seed []byte) {
	c := &choices{b: seed}
	end := lineEndings[c.intn(3)]
	var b strings.Builder
	sequence := 1
	frame := func(event string) {
		b.WriteString(": hb" + end + "data: " + event + end + end)
		sequence++
	}
	frame(startedEvent)
	want := []string{EventRunStarted}
	for n := c.intn(4); n > 0; n-- {
		if c.intn(2) == 1 {
			frame(`{"type":"x.future","optional":true,"runId":"r1","sequence":` + strconv.Itoa(sequence) + `,"timestamp":"2026-09-20T12:00:00.000Z"}`)
		}
		text, _ := json.Marshal(c.text())
		frame(`{"type":"text.delta","runId":"r1","sequence":` + strconv.Itoa(sequence) + `,"timestamp":"2026-09-20T12:00:00.000Z","text":` + string(text) + `}`)
		want = append(want, EventTextDelta)
	}
	frame(strings.Replace(completedEvent, `"sequence":3`, `"sequence":`+strconv.Itoa(sequence), 1))
	want = append(want, EventRunCompleted)
	body := []byte(b.String())
	sizes := c.sizes()

	stream := func(body []byte) ([]string, error) {
		client, err := New("http://127.0.0.1:9", testToken, WithTransport(bodyTransport{body: body, sizes: sizes}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var got []string
		for ev, err := range client.Stream(ctx, demo()) {
			if err != nil {
				return got, err
			}
			got = append(got, ev.Type)
		}
		return got, nil
	}
	if got, err := stream(body); err != nil || !slices.Equal(got, want) {
		t.Fatalf("valid run %q in reads %v: %q, %v; want %q", body, sizes, got, err, want)
	}
	damaged := bytes.Clone(body)
	for n := 1 + c.intn(3); n > 0; n-- {
		damaged[c.intn(len(damaged))] = byte(c.intn(256))
	}
	damaged = damaged[:c.intn(len(damaged)+1)]
	if _, err := stream(damaged); err != nil {
		var de *DriverError
		if !errors.As(err, &de) || !slices.Contains(streamCodes, de.Code) {
			t.Fatalf("damaged run %q: %T %v, want a typed stream error", damaged, err, err)
		}
	}
}

func TestPropertyStreamPath(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 4))
	for i := propertyRuns(t); i > 0; i-- {
		checkStreamPath(t, randomSeed(r))
	}
}

func FuzzStreamPath(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 3, 1, 5, 0, 7, 2, 3, 9, 200, 4, 17})
	f.Fuzz(checkStreamPath)
}
