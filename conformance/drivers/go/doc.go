// Package conformance is the Go driver of the cross-language conformance harness
// (conformance/CONTRACT.md): a test-only module that uses the client in clients/go
// through its public API only. `go test` runs it when the harness provides its
// environment; see ./run.
package conformance
