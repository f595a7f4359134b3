package agenticdriver

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// MaxEventBytes bounds one SSE frame: the UTF-8 bytes of all its lines (field names
// and comments included; line terminators and a leading BOM excluded).
const MaxEventBytes = 2_000_000

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sseReader splits a text/event-stream body into the data of its frames. Lines end at
// LF, CRLF or a lone CR (also when CR and LF arrive in different reads); only `data`
// fields are used, joined by LF; a blank line dispatches a frame that has data.
type sseReader struct {
	r          io.Reader
	buf        []byte
	pending    []byte // read but not yet split into lines
	line       []byte // the current partial line
	data       bytes.Buffer
	hasData    bool
	frameBytes int
	firstLine  bool
	skipLF     bool // the previous line ended with CR; a following LF belongs to it
	err        error
	id         []byte // the id field of the frame being read
	hasID      bool
	frameID    string // the id field of the frame next returned, when it had one
	frameHasID bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: r, buf: make([]byte, 32*1024), firstLine: true}
}

// next returns the data of the next frame, io.EOF at a clean end of stream, or a
// *DriverError (INVALID_STREAM, RESPONSE_TOO_LARGE, INCOMPLETE_STREAM). Errors of the
// underlying reader are returned unchanged.
func (s *sseReader) next() ([]byte, error) {
	for {
		if s.err != nil {
			return nil, s.err
		}
		for len(s.pending) > 0 {
			if frame, done, err := s.consumeLine(); err != nil || done {
				if err != nil {
					s.err = err
				}
				return frame, err
			}
		}
		if err := s.checkSize(len(s.line)); err != nil {
			s.err = err
			return nil, err
		}
		n, err := s.r.Read(s.buf)
		s.pending = s.buf[:n]
		if n > 0 {
			continue
		}
		if err == io.EOF {
			s.err = s.finish()
			return nil, s.err
		}
		if err != nil {
			s.err = err
			return nil, err
		}
	}
}

// consumeLine moves bytes from pending into the current line; when a line completes it
// is processed, and a dispatched frame is returned with done = true.
func (s *sseReader) consumeLine() (frame []byte, done bool, err error) {
	if s.skipLF {
		s.skipLF = false
		if s.pending[0] == '\n' {
			s.pending = s.pending[1:]
			return nil, false, nil
		}
	}
	i := lineEnd(s.pending)
	if i < 0 {
		s.line = append(s.line, s.pending...)
		s.pending = nil
		return nil, false, nil
	}
	var line []byte
	if len(s.line) == 0 {
		line = s.pending[:i] // the whole line is in this read: no copy
	} else {
		s.line = append(s.line, s.pending[:i]...)
		line = s.line
	}
	s.skipLF = s.pending[i] == '\r'
	s.pending = s.pending[i+1:]
	return s.processLine(s.takeLine(line))
}

// lineEnd is the index of the first CR or LF in p, or -1 (two SIMD byte searches).
func lineEnd(p []byte) int {
	lf := bytes.IndexByte(p, '\n')
	head := p
	if lf >= 0 {
		head = p[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// takeLine returns the completed line without a leading BOM and starts a new one (the
// line buffer is reused: processLine copies what it keeps).
func (s *sseReader) takeLine(line []byte) []byte {
	s.line = s.line[:0]
	if s.firstLine {
		s.firstLine = false
		line = bytes.TrimPrefix(line, utf8BOM)
	}
	return line
}

func (s *sseReader) processLine(line []byte) ([]byte, bool, error) {
	if len(line) == 0 {
		s.frameBytes = 0
		if !s.hasData {
			s.id, s.hasID = s.id[:0], false
			return nil, false, nil
		}
		frame := bytes.Clone(s.data.Bytes())
		s.data.Reset()
		s.hasData = false
		s.frameID, s.frameHasID = string(s.id), s.hasID
		s.id, s.hasID = s.id[:0], false
		return frame, true, nil
	}
	s.frameBytes += len(line)
	if err := s.checkSize(0); err != nil {
		return nil, false, err
	}
	if !utf8.Valid(line) {
		return nil, false, newError(CodeInvalidStream, "the event stream is not valid UTF-8")
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	if string(name) == "id" {
		s.id = append(s.id[:0], bytes.TrimPrefix(value, []byte(" "))...)
		s.hasID = true
		return nil, false, nil
	}
	if string(name) != "data" {
		return nil, false, nil // comments (empty name) and other fields are ignored
	}
	value = bytes.TrimPrefix(value, []byte(" "))
	if s.hasData {
		s.data.WriteByte('\n')
	}
	s.data.Write(value)
	s.hasData = true
	return nil, false, nil
}

// lastID returns the id field of the frame next returned last, and whether it had one.
func (s *sseReader) lastID() (string, bool) { return s.frameID, s.frameHasID }

func (s *sseReader) checkSize(partial int) error {
	if s.firstLine && bytes.HasPrefix(s.line, utf8BOM) {
		partial -= len(utf8BOM)
	}
	if s.frameBytes+partial > MaxEventBytes {
		return newError(CodeResponseTooLarge, "an event is larger than %d bytes", MaxEventBytes)
	}
	return nil
}

// finish ends the stream: a partial line or pending data means it was cut short.
func (s *sseReader) finish() error {
	// A body that is only a BOM is an empty stream: the BOM does not start a line.
	if s.firstLine && bytes.Equal(s.line, utf8BOM) {
		s.line = nil
	}
	if len(s.line) > 0 || s.hasData {
		return newError(CodeIncompleteStream, "the event stream ended inside an event")
	}
	return io.EOF
}
