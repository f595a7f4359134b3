package agenticdriver

import "fmt"

// Client-side error codes. Codes sent by a host are passed through unchanged,
// including codes this package does not know.
const (
	CodeInsecureTransport          = "INSECURE_TRANSPORT"
	CodeAuthRequired               = "AUTH_REQUIRED"
	CodeHTTPError                  = "HTTP_ERROR"
	CodeInvalidResponse            = "INVALID_RESPONSE"
	CodeInvalidStream              = "INVALID_STREAM"
	CodeIncompleteStream           = "INCOMPLETE_STREAM"
	CodeUnsupportedEvent           = "UNSUPPORTED_EVENT"
	CodeResponseTooLarge           = "RESPONSE_TOO_LARGE"
	CodeUnsupportedProtocolVersion = "UNSUPPORTED_PROTOCOL_VERSION"
	CodeToolStreamRequired         = "TOOL_STREAM_REQUIRED"
	CodeApprovalStreamRequired     = "APPROVAL_STREAM_REQUIRED"
	CodeInvalidCallback            = "INVALID_CALLBACK"
)

// OutcomeUncertain marks an error whose side effects need reconciliation.
const OutcomeUncertain = "uncertain"

// DriverError is every error the protocol defines: a host error envelope, a failed or
// cancelled run, or a rule this client enforces. Inspect it with errors.As.
// Retryable is a hint only; the client never retries by itself.
type DriverError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	Outcome   string `json:"outcome,omitempty"`
}

func (e *DriverError) Error() string { return e.Code + ": " + e.Message }

func newError(code, format string, args ...any) *DriverError {
	return &DriverError{Code: code, Message: fmt.Sprintf(format, args...)}
}
