package agenticdriver

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// chunkedReader returns its data in reads of at most size bytes, like a network body.
type chunkedReader struct {
	data []byte
	size int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(r.size, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// readFrames collects every frame and the final error code ("" for a clean end).
func readFrames(data []byte, chunk int) ([]string, string) {
	s := newSSEReader(&chunkedReader{data: data, size: chunk})
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
			return frames, err.Error()
		}
		frames = append(frames, string(frame))
	}
}

func TestSSEFramingAtEveryChunkSize(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		frames []string
		code   string
	}{
		{"lf", "data: a\n\ndata: b\n\n", []string{"a", "b"}, ""},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}, ""},
		{"bare cr", "data: a\r\rdata: b\r\r", []string{"a", "b"}, ""},
		{"bom", "\uFEFFdata: a\n\n", []string{"a"}, ""},
		{"bom only at start", "data: a\n\n\uFEFFdata: b\n\n", []string{"a"}, ""},
		{"multi-line data", "data: {\ndata:  \"x\": 1\ndata:}\n\n", []string{"{\n \"x\": 1\n}"}, ""},
		{"comments and other fields", ": hi\nevent: x\nid: 1\nretry: 5\ndata:a\n\n", []string{"a"}, ""},
		{"data without colon", "data\n\n", []string{""}, ""},
		{"blank lines without data", "\n\n: only a comment\n\n", nil, ""},
		{"utf8 across reads", "data: Hello 🌍\n\n", []string{"Hello 🌍"}, ""},
		{"partial line at eof", "data: a", nil, CodeIncompleteStream},
		{"pending data at eof", "data: a\n", nil, CodeIncompleteStream},
		{"invalid utf8", "data: \xff\n\n", nil, CodeInvalidStream},
		{"invalid utf8 at eof", "data: \xff", nil, CodeIncompleteStream},
	}
	for _, c := range cases {
		for chunk := 1; chunk <= 64; chunk++ {
			frames, code := readFrames([]byte(c.stream), chunk)
			if code != c.code || strings.Join(frames, "|") != strings.Join(c.frames, "|") {
				t.Fatalf("%s (chunk %d): frames %q code %q, want %q %q", c.name, chunk, frames, code, c.frames, c.code)
			}
		}
	}
}

func TestSSEFrameLimitCountsLineBytes(t *testing.T) {
	atLimit := "data:" + strings.Repeat("x", MaxEventBytes-len("data:")) + "\n\n"
	if frames, code := readFrames([]byte(atLimit), 32*1024); code != "" || len(frames) != 1 {
		t.Fatalf("a frame of exactly %d bytes: code %q", MaxEventBytes, code)
	}
	// Comments count towards the frame; a blank line starts a new one.
	over := ": c\n" + atLimit
	if _, code := readFrames([]byte(over), 32*1024); code != CodeResponseTooLarge {
		t.Fatalf("over the limit: code %q", code)
	}
	// A line that never ends is rejected once it passes the limit, not at EOF.
	endless := io.MultiReader(strings.NewReader("data:"), &repeatReader{b: 'x'})
	if _, err := newSSEReader(endless).next(); !isCode(err, CodeResponseTooLarge) {
		t.Fatalf("endless line: %v", err)
	}
	bom := "\uFEFF" + atLimit
	if _, code := readFrames([]byte(bom), 7); code != "" {
		t.Fatalf("the BOM must not count: code %q", code)
	}
}

type repeatReader struct{ b byte }

func (r *repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.b
	}
	return len(p), nil
}

func isCode(err error, code string) bool {
	var de *DriverError
	return errors.As(err, &de) && de.Code == code
}

func TestSSEPassesReadErrorsThrough(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\n"), &failingReader{err: boom})
	s := newSSEReader(r)
	if frame, err := s.next(); err != nil || string(frame) != "a" {
		t.Fatalf("first frame: %q %v", frame, err)
	}
	if _, err := s.next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the read error", err)
	}
}

type failingReader struct{ err error }

func (r *failingReader) Read([]byte) (int, error) { return 0, r.err }

// FuzzSSEReader checks that framing never depends on how the body is split into reads
// and that no input panics or yields an oversized or invalid UTF-8 frame.
func FuzzSSEReader(f *testing.F) {
	for _, seed := range []string{"data: a\n\n", "data: a\r\n\r\n", "data: a\r\rdata: b\r\r", "\uFEFFdata: x\n\n", ": c\ndata\n\n", "data: \xff\n\n", "data: a"} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		whole, wholeCode := readFrames(data, len(data)+1)
		split, splitCode := readFrames(data, int(chunk%16)+1)
		if wholeCode != splitCode || strings.Join(whole, "\x00|") != strings.Join(split, "\x00|") {
			t.Fatalf("split reads changed the result: %q %q vs %q %q", whole, wholeCode, split, splitCode)
		}
		for _, frame := range whole {
			if len(frame) > MaxEventBytes || !utf8.ValidString(frame) {
				t.Fatalf("frame of %d bytes, valid UTF-8 %v", len(frame), utf8.ValidString(frame))
			}
		}
	})
}
