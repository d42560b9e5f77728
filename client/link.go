package client

import (
	"context"
	"net/http"
)

// Link flow settings

// LinkAllowedOrigins are the web origins allowed to embed the developer's
// hosted link flow, and the frame-ancestors source list /link is served
// with for its flows (the environment's default when there are none).
type LinkAllowedOrigins struct {
	AllowedOrigins []string `json:"allowed_origins"`
	FrameAncestors string   `json:"frame_ancestors"`
}

// LinkAllowedOrigins returns the developer's allowed origins.
func (c *Client) LinkAllowedOrigins(ctx context.Context) (*LinkAllowedOrigins, error) {
	var out LinkAllowedOrigins
	if err := c.do(ctx, http.MethodGet, "/link/allowed_origins", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetLinkAllowedOrigins replaces the developer's allowed origins with
// origins ("https://host[:port]"; none removes them all) and returns the
// list as stored.
func (c *Client) SetLinkAllowedOrigins(ctx context.Context, origins []string) (*LinkAllowedOrigins, error) {
	if origins == nil {
		origins = []string{}
	}
	var out LinkAllowedOrigins
	body := map[string][]string{"allowed_origins": origins}
	if err := c.do(ctx, http.MethodPut, "/link/allowed_origins", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
