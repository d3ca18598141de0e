// Package client is the Go client of agentd's HTTP API, used by the CLI
// and by tests. It speaks only the public API, so anything it does a user
// can do with curl.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/manifest"
)

// ErrNotRunning means no daemon answered at the address.
var ErrNotRunning = errors.New("agentd is not running")

// APIError is an error response of the API.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s (HTTP %d %s)", e.Message, e.Status, e.Code)
}

// Client talks to one daemon.
type Client struct {
	base   string
	key    string
	http   *http.Client
	stream *http.Client // no overall timeout: streams last as long as runs
}

// New returns a client for the daemon at base (e.g. "http://127.0.0.1:4200").
func New(base, apiKey string) *Client {
	return &Client{
		base:   strings.TrimRight(base, "/"),
		key:    apiKey,
		http:   &http.Client{Timeout: 10 * time.Minute},
		stream: &http.Client{},
	}
}

// BaseURL returns the daemon's base URL.
func (c *Client) BaseURL() string { return c.base }

func (c *Client) do(ctx context.Context, hc *http.Client, method, path string, body, out any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || isDialError(err) {
			return nil, fmt.Errorf("%w at %s (start it with `agentd start`)", ErrNotRunning, c.base)
		}
		return nil, err
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e)
		if e.Error.Message == "" {
			e.Error.Message = resp.Status
		}
		return nil, &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out == nil {
		return resp, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return resp, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return resp, nil
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.do(ctx, c.http, method, path, body, out)
	if err == nil && out == nil {
		resp.Body.Close()
	}
	return err
}

// Health returns the daemon's health.
func (c *Client) Health(ctx context.Context) (httpapi.Health, error) {
	var h httpapi.Health
	return h, c.call(ctx, http.MethodGet, "/api/health", nil, &h)
}

// Agents lists agents.
func (c *Client) Agents(ctx context.Context) ([]agent.Entry, error) {
	var out struct {
		Agents []agent.Entry `json:"agents"`
	}
	return out.Agents, c.call(ctx, http.MethodGet, "/api/agents", nil, &out)
}

// Agent returns one agent.
func (c *Client) Agent(ctx context.Context, name string) (agent.Entry, error) {
	var e agent.Entry
	return e, c.call(ctx, http.MethodGet, "/api/agents/"+url.PathEscape(name), nil, &e)
}

// CreateAgent creates an agent.
func (c *Client) CreateAgent(ctx context.Context, m manifest.Manifest) error {
	return c.call(ctx, http.MethodPost, "/api/agents", m, nil)
}

// DeleteAgent deletes an agent.
func (c *Client) DeleteAgent(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, "/api/agents/"+url.PathEscape(name), nil, nil)
}

// Send sends a message and returns the agent's reply.
func (c *Client) Send(ctx context.Context, agentName string, req httpapi.MessageRequest) (httpapi.MessageResponse, error) {
	var out httpapi.MessageResponse
	req.Stream = false
	return out, c.call(ctx, http.MethodPost, "/api/agents/"+url.PathEscape(agentName)+"/messages", req, &out)
}

// Stream sends a message and calls onEvent for every event of the run.
// It returns the final event, or an error if the run failed.
func (c *Client) Stream(ctx context.Context, agentName string, req httpapi.MessageRequest, onEvent func(agent.Event)) (agent.Event, error) {
	req.Stream = true
	resp, err := c.do(ctx, c.stream, http.MethodPost, "/api/agents/"+url.PathEscape(agentName)+"/messages", req, nil)
	if err != nil {
		return agent.Event{}, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var last agent.Event
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e agent.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return last, fmt.Errorf("decode event: %w", err)
		}
		if onEvent != nil {
			onEvent(e)
		}
		last = e
		switch e.Type {
		case agent.EventError:
			return e, errors.New(e.Error)
		case agent.EventFinal:
			return e, nil
		}
	}
	if err := sc.Err(); err != nil {
		return last, fmt.Errorf("read stream: %w", err)
	}
	return last, errors.New("stream ended before the run finished")
}

// Get fetches path and decodes the JSON into out: for the routes the CLI
// only prints.
func (c *Client) Get(ctx context.Context, path string, out any) error {
	return c.call(ctx, http.MethodGet, path, nil, out)
}

// Post sends body to path and decodes the JSON reply into out (nil = none).
func (c *Client) Post(ctx context.Context, path string, body, out any) error {
	return c.call(ctx, http.MethodPost, path, body, out)
}

// Delete deletes path.
func (c *Client) Delete(ctx context.Context, path string) error {
	return c.call(ctx, http.MethodDelete, path, nil, nil)
}
