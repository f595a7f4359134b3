package agenticdriver

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

const (
	maxJSONBytes     = 2_000_000
	maxErrorBodySize = 64_000
	maxTokenLength   = 4096
)

// Client talks to one AgenticDriver host. It is safe for concurrent use. It never
// follows redirects and never retries; cancel a call through its context.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
	// ownTransport is the transport New made (nil with WithTransport: the caller owns it).
	ownTransport *http.Transport
}

// Option configures a Client.
type Option func(*options)

type options struct {
	transport http.RoundTripper
	tlsConfig *tls.Config
}

// WithTransport sends every request through rt (custom networking, proxies, mTLS).
// The caller owns rt. It takes precedence over WithTLSConfig.
func WithTransport(rt http.RoundTripper) Option { return func(o *options) { o.transport = rt } }

// WithTLSConfig verifies the host with cfg, e.g. a private CA in cfg.RootCAs. Hostname
// verification stays on. The setting applies to this client only.
func WithTLSConfig(cfg *tls.Config) Option { return func(o *options) { o.tlsConfig = cfg } }

// New returns a client for the host at baseURL, authenticating with the bearer token.
// baseURL must be https, or http on a loopback host; a path prefix is kept.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if token == "" || len(token) > maxTokenLength || strings.ContainsAny(token, " \t\r\n\x00") {
		return nil, newError(CodeAuthRequired, "a bearer token of 1 to %d characters without whitespace is required", maxTokenLength)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	transport := o.transport
	var own *http.Transport
	if transport == nil {
		own = http.DefaultTransport.(*http.Transport).Clone()
		if o.tlsConfig != nil {
			own.TLSClientConfig = o.tlsConfig.Clone()
		}
		transport = own
	}
	client := &http.Client{
		Transport: transport,
		// Credentials must never move to another location.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Client{base: base, token: token, http: client, ownTransport: own}, nil
}

// Close closes the idle connections of the transport New made; a transport passed with
// WithTransport belongs to the caller and is left alone. Streams still being read are
// ended by their context or by leaving their loop, not by Close.
func (c *Client) Close() {
	if c.ownTransport != nil {
		c.ownTransport.CloseIdleConnections()
	}
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	// An IPv6 zone id ([::1%25lo]) is not part of a URL a browser or the other clients parse.
	if err != nil || u.Host == "" || u.Opaque != "" || strings.Contains(u.Host, "%") || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, newError(CodeInvalidURL, "the host URL is not an absolute http(s) URL (e.g. http://127.0.0.1:7433)")
	}
	if u.User != nil || strings.ContainsAny(raw, "?#") {
		return nil, newError(CodeInsecureTransport, "the host URL must not carry credentials, a query or a fragment")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, newError(CodeInsecureTransport, "the host URL must use https (http is allowed on loopback only)")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		u.RawPath = ""
	}
	return u, nil
}

// isLoopback is the host's loopback rule, the same in every client
// (protocol/fixtures/base-url.json): localhost, a dotted-quad 127.0.0.0/8 literal, ::1 and
// ::ffff:127.x.y.z. Only literals count (no DNS lookup; 127.1 or a zone id is not loopback).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || addr.Zone() != "" {
		return false
	}
	if addr.Is4In6() {
		addr = addr.Unmap()
	}
	return addr == netip.IPv6Loopback() || (addr.Is4() && addr.As4()[0] == 127)
}

// call sends one request and returns the response once its status and protocol version
// were accepted. Non-2xx statuses become *DriverError. The caller closes the body.
func (c *Client) call(ctx context.Context, endpoint string, query url.Values, body any, accept string) (*http.Response, error) {
	return c.callWith(ctx, endpoint, query, body, accept, nil)
}

// openStream sends a request answered by an event stream and returns its body (the caller
// closes it) and a reader of its frames. A failed call is its exchange error (judged by ctx,
// the caller's context), an answer that is not an event stream INVALID_RESPONSE.
func (c *Client) openStream(ctx, streamCtx context.Context, endpoint string, body any, header http.Header) (io.Closer, *sseReader, error) {
	resp, err := c.callWith(streamCtx, endpoint, nil, body, "text/event-stream", header)
	if err != nil {
		return nil, nil, exchangeError(ctx, err)
	}
	if !strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		return nil, nil, newError(CodeInvalidResponse, "the host did not answer with an event stream")
	}
	return resp.Body, newSSEReader(resp.Body), nil
}

// callWith is call with extra request headers.
func (c *Client) callWith(ctx context.Context, endpoint string, query url.Values, body any, accept string, extra http.Header) (*http.Response, error) {
	target := c.base.ResolveReference(&url.URL{Path: endpoint, RawQuery: query.Encode()})
	method := http.MethodGet
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		method, reader = http.MethodPost, bytes.NewReader(encoded)
	}
	httpReq, err := http.NewRequestWithContext(ctx, method, target.String(), reader)
	if err != nil {
		return nil, err
	}
	httpReq.Header.Set("Authorization", "Bearer "+c.token)
	httpReq.Header.Set("AgenticDriver-Version", ProtocolVersion)
	httpReq.Header.Set("AgenticDriver-Accept-Optional-Events", "true")
	httpReq.Header.Set("Accept", accept)
	if body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	for name, values := range extra {
		httpReq.Header[name] = values
	}
	resp, err := c.http.Do(httpReq)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		resp.Body.Close()
		return nil, newError(CodeHTTPError, "the host answered with a redirect (%d); redirects are never followed", resp.StatusCode)
	}
	if v := resp.Header.Values("AgenticDriver-Version"); len(v) > 0 && (len(v) != 1 || v[0] != ProtocolVersion) {
		resp.Body.Close()
		return nil, newError(CodeUnsupportedProtocolVersion, "the host answered with protocol version %q", strings.Join(v, ", "))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp, nil
}

// statusError turns a non-2xx response into the host's error, or HTTP_ERROR when the
// body is not a valid error envelope.
func statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodySize))
	if value, err := parseJSON(body); err == nil {
		if errorEnvelopeRule(value, "body") == nil {
			var envelope struct {
				Error DriverError `json:"error"`
			}
			if decodeExact(body, &envelope) == nil {
				return &envelope.Error
			}
		}
	}
	return &DriverError{
		Code:      CodeHTTPError,
		Message:   "the host answered HTTP " + resp.Status,
		Retryable: resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
	}
}

// post sends one JSON operation: req checked by op.request (a malformed one is refused
// with op.invalid before anything is sent), the answer checked by op.response.
func (c *Client) post(ctx context.Context, op operation, req any, out any) error {
	body, err := requestBody(op, req)
	if err != nil {
		return err
	}
	return c.send(ctx, op, nil, body, out)
}

// pathOf is op's path with its {id} parameter filled in.
func pathOf(op operation, id string) string {
	return strings.Replace(op.path, "{id}", url.PathEscape(id), 1)
}

// requestBody is req as JSON, checked by op.request and op.requestRules.
func requestBody(op operation, req any) (json.RawMessage, error) {
	return checkedBody(req, func(v any) error { return checkRequest(op, v) }, op.invalid, op.id+" request")
}

// checkRequest holds a request (generic JSON) to its schema and its rule set.
func checkRequest(op operation, v any) error {
	if err := op.request(v, "request"); err != nil {
		return err
	}
	if op.requestRules == "" {
		return nil
	}
	if broken := evaluateRules(op.requestRules, map[string]any{"request": v}); broken != nil {
		return broken
	}
	return nil
}

// send calls a JSON operation with an already checked body (nil for GET), validates the
// answer with op.response and op.answerRules (against the body) and decodes it into out.
// Exchange failures are *DriverError.
func (c *Client) send(ctx context.Context, op operation, query url.Values, body any, out any) error {
	check := op.response
	if op.answerRules != "" {
		request, err := jsonValueOf(body)
		if err != nil {
			return newError(op.invalid, "the %s request is not representable as JSON: %v", op.id, err)
		}
		check = func(v any, path string) error {
			if err := op.response(v, path); err != nil {
				return err
			}
			if broken := evaluateRules(op.answerRules, map[string]any{"answer": v, "request": request}); broken != nil {
				return fmt.Errorf("the host's %s answer does not match the request: %w", op.id, broken)
			}
			return nil
		}
	}
	if err := c.getJSON(ctx, op.path, query, body, check, out); err != nil {
		return exchangeError(ctx, err)
	}
	return nil
}

// getJSON calls a JSON endpoint, validates the body with check and decodes it into out.
func (c *Client) getJSON(ctx context.Context, endpoint string, query url.Values, body any, check rule, out any) error {
	resp, err := c.call(ctx, endpoint, query, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxJSONBytes {
		return newError(CodeResponseTooLarge, "the response is larger than %d bytes", maxJSONBytes)
	}
	value, err := parseJSON(data)
	if err != nil {
		return newError(CodeInvalidResponse, "%v", err)
	}
	if err := check(value, "response"); err != nil {
		return newError(CodeInvalidResponse, "%v", err)
	}
	if err := decodeExact(data, out); err != nil {
		return newError(CodeInvalidResponse, "%v", err)
	}
	return nil
}
