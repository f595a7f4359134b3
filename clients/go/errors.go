package agenticdriver

import (
	"context"
	"errors"
	"fmt"
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
	cause     error
}

func (e *DriverError) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the transport or context error behind CANCELLED, TIMEOUT and
// HOST_UNREACHABLE, so errors.Is(err, context.Canceled) works.
func (e *DriverError) Unwrap() error { return e.cause }

func newError(code, format string, args ...any) *DriverError {
	return &DriverError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// exchangeError maps a failed HTTP exchange to a *DriverError. The caller's own
// cancellation wins over the transport error it caused; protocol errors pass through.
func exchangeError(caller context.Context, err error) error {
	var de *DriverError
	switch {
	case errors.As(err, &de):
		return err
	case caller.Err() != nil:
		return &DriverError{Code: CodeCancelled, Message: "the caller cancelled the request", cause: errors.Join(caller.Err(), err)}
	case errors.Is(err, context.DeadlineExceeded):
		return &DriverError{Code: CodeTimeout, Message: "the host did not answer in time", Retryable: true, cause: err}
	}
	return &DriverError{Code: CodeHostUnreachable, Message: "could not reach the host: " + err.Error(), cause: err}
}
