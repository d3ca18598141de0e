package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/store"
)

// Session resources: a transcript in Markdown, and the same messages as
// JSON (the agent package's message encoding).
const (
	sessionURIPrefix   = "agentd://sessions/"
	sessionJSONSuffix  = "/messages.json"
	sessionTemplate    = sessionURIPrefix + "{id}"
	sessionJSONTemplte = sessionURIPrefix + "{id}" + sessionJSONSuffix
	// sessionPageSize is how many sessions one resources/list page holds.
	sessionPageSize = 50
)

// SessionURI is the resource URI of a session's Markdown transcript.
func SessionURI(id string) string { return sessionURIPrefix + url.PathEscape(id) }

// addSessionResources serves transcripts by URI and lists sessions, newest
// first, a page at a time. The list comes from the store, not from the
// SDK's resource table, so thousands of sessions cost nothing until
// listed.
func (s *Server) addSessionResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: sessionTemplate,
		Name:        "session",
		Title:       "agentd session transcript",
		Description: "The messages of one agentd conversation, as Markdown. Any session can be read, whichever protocol started it.",
		MIMEType:    "text/markdown",
	}, s.readSession)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: sessionJSONTemplte,
		Name:        "session-messages",
		Title:       "agentd session messages (JSON)",
		Description: "The session and its messages as JSON.",
		MIMEType:    "application/json",
	}, s.readSession)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			var cursor string
			if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
				cursor = p.Cursor
			}
			return s.listSessions(ctx, cursor)
		}
	})
}

func (s *Server) listSessions(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	offset := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, failf(errInvalidParams, "invalid cursor")
		}
		offset = n
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	// Sessions are private to this daemon's user and change all the time.
	res.CacheScope = "private"
	if s.opts.Sessions == nil {
		return res, nil
	}
	list, err := s.opts.Sessions.ListSessions(ctx, store.SessionFilter{Limit: sessionPageSize + 1, Offset: offset})
	if err != nil {
		return nil, wireError(fmt.Errorf("list sessions: %w", err))
	}
	if len(list) > sessionPageSize {
		list = list[:sessionPageSize]
		res.NextCursor = strconv.Itoa(offset + sessionPageSize)
	}
	for _, ss := range list {
		title := ss.Title
		if title == "" {
			title = "(untitled)"
		}
		res.Resources = append(res.Resources, &mcp.Resource{
			URI:         SessionURI(ss.ID),
			Name:        ss.ID,
			Title:       title,
			Description: fmt.Sprintf("Conversation with agent %q, started over %s, last updated %s.", ss.Agent, orUnknown(ss.Origin), ss.UpdatedAt.UTC().Format(time.RFC3339)),
			MIMEType:    "text/markdown",
		})
	}
	return res, nil
}

func (s *Server) readSession(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, sessionURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	rest, asJSON := strings.CutSuffix(rest, sessionJSONSuffix)
	id, err := url.PathUnescape(rest)
	if err != nil || id == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	sess, msgs, err := s.opts.Kernel.Session(ctx, id)
	if errors.Is(err, agent.ErrSessionNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	res := &mcp.ReadResourceResult{}
	res.CacheScope = "private"
	if asJSON {
		data, err := json.Marshal(sessionJSON{Session: sessionInfo(sess), Messages: msgs})
		if err != nil {
			return nil, fmt.Errorf("encode session %s: %w", id, err)
		}
		res.Contents = []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(data)}}
		return res, nil
	}
	res.Contents = []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: Transcript(sess, msgs)}}
	return res, nil
}

type sessionMeta struct {
	ID        string    `json:"id"`
	Agent     string    `json:"agent"`
	Title     string    `json:"title,omitempty"`
	Origin    string    `json:"origin,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type sessionJSON struct {
	Session  sessionMeta   `json:"session"`
	Messages []llm.Message `json:"messages"`
}

func sessionInfo(s store.Session) sessionMeta {
	return sessionMeta{ID: s.ID, Agent: s.Agent, Title: s.Title, Origin: s.Origin, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC()}
}

// Transcript renders a session as Markdown: a header, then each message
// under its role, tool calls and results in fenced blocks.
func Transcript(sess store.Session, msgs []llm.Message) string {
	var b strings.Builder
	title := sess.Title
	if title == "" {
		title = "Session " + sess.ID
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))
	fmt.Fprintf(&b, "- session: `%s`\n- agent: `%s`\n- origin: %s\n- created: %s\n- updated: %s\n",
		sess.ID, sess.Agent, orUnknown(sess.Origin),
		sess.CreatedAt.UTC().Format(time.RFC3339), sess.UpdatedAt.UTC().Format(time.RFC3339))
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			b.WriteString("\n## User\n\n")
		case llm.RoleAssistant:
			b.WriteString("\n## Assistant\n\n")
		case llm.RoleTool:
			b.WriteString("\n## Tool results\n\n")
		default:
			fmt.Fprintf(&b, "\n## %s\n\n", m.Role)
		}
		for _, p := range m.Parts {
			switch {
			case p.Image != nil:
				fmt.Fprintf(&b, "[image: %s, %d bytes]\n\n", p.Image.MIMEType, len(p.Image.Data))
			case p.Text != "":
				b.WriteString(p.Text)
				b.WriteString("\n\n")
			}
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "Tool call `%s`:\n\n%s\n", c.Name, fence("json", string(c.Arguments)))
		}
		for _, r := range m.ToolResults {
			status := ""
			if r.IsError {
				status = " (error)"
			}
			fmt.Fprintf(&b, "Result of `%s`%s:\n\n%s\n", r.Name, status, fence("text", r.Content))
		}
	}
	return b.String()
}

// fence puts s in a fenced code block whose fence is longer than any run
// of backticks inside s, so content cannot break out of the block.
func fence(lang, s string) string {
	n, run := 3, 0
	for _, r := range s {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
