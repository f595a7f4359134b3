package agenticdriver

import (
	"context"
	"net/url"
	"time"
)

// discoveryTimeout bounds Protocol and Providers, which never wait for model work.
const discoveryTimeout = 10 * time.Second

// Protocol returns the host's protocol descriptor (GET /v1/protocol).
func (c *Client) Protocol(ctx context.Context) (*ProtocolInfo, error) {
	bounded, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	var info ProtocolInfo
	if err := c.send(bounded, opGetProtocol, nil, nil, &info); err != nil {
		return nil, exchangeError(ctx, err)
	}
	return &info, nil
}

// Providers lists the provider instances the token may use (GET /v1/providers).
// refresh asks the host to bypass its discovery cache.
func (c *Client) Providers(ctx context.Context, refresh bool) ([]Provider, error) {
	bounded, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	var query url.Values
	if refresh {
		query = url.Values{"refresh": {"true"}}
	}
	var list struct {
		Providers []Provider `json:"providers"`
	}
	if err := c.send(bounded, opListProviders, query, nil, &list); err != nil {
		return nil, exchangeError(ctx, err)
	}
	return list.Providers, nil
}
