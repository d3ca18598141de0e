package a2aedge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The daemon's own API over the A2A client (used by `agentd a2a`):
//
//	GET  /api/a2a/agents              external agents and their discovery state
//	POST /api/a2a/discover            {"url", "allow_private"} → the card
//	POST /api/a2a/send                {"agent", "message", "context_id", "task_id", "stream"}
//	GET  /api/a2a/tasks/{id}          a local task, else one sent through this daemon (?agent= to choose)
//	POST /api/a2a/tasks/{id}/cancel   cancel a task sent through this daemon (?agent=)

func (s *Server) registerAPI(mux Router) {
	mux.HandleFunc("GET /api/a2a/agents", s.apiAgents)
	mux.HandleFunc("POST /api/a2a/discover", s.apiDiscover)
	mux.HandleFunc("POST /api/a2a/send", s.apiSend)
	mux.HandleFunc("GET /api/a2a/tasks/{id}", s.apiTask)
	mux.HandleFunc("POST /api/a2a/tasks/{id}/cancel", s.apiCancel)
}

func (s *Server) apiAgents(w http.ResponseWriter, r *http.Request) {
	agents := s.opts.Client.Agents()
	writeJSON(w, http.StatusOK, map[string]any{"agents": agents, "total": len(agents)})
}

// DiscoverRequest is the body of POST /api/a2a/discover.
type DiscoverRequest struct {
	URL          string `json:"url"`
	AllowPrivate bool   `json:"allow_private,omitempty"`
}

func (s *Server) apiDiscover(w http.ResponseWriter, r *http.Request) {
	var req DiscoverRequest
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, s.log, err)
		return
	}
	if req.URL == "" {
		writeErr(w, s.log, fmt.Errorf("%w: url: required", errBadRequest))
		return
	}
	reach := Reach{AllowPrivate: req.AllowPrivate, Hint: `send "allow_private": true (agentd a2a discover --allow-private) to allow it`}
	card, err := s.opts.Client.Discover(r.Context(), req.URL, reach, "")
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, card)
}

// APISendRequest is the body of POST /api/a2a/send.
type APISendRequest struct {
	Agent string `json:"agent"`
	SendRequest
	// Stream answers a stream of server-sent events, one per A2A event
	// ("event: task|statusUpdate|artifactUpdate|message", data: the event).
	Stream bool `json:"stream,omitempty"`
}

// APISendResponse is the reply of a non-streamed POST /api/a2a/send.
type APISendResponse struct {
	Task *a2a.Task `json:"task"`
	// Text is what the task produced, as text.
	Text string `json:"text"`
}

func (s *Server) apiSend(w http.ResponseWriter, r *http.Request) {
	var req APISendRequest
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, s.log, err)
		return
	}
	if req.Agent == "" || req.Message == "" {
		writeErr(w, s.log, fmt.Errorf("%w: agent and message are required", errBadRequest))
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	if !req.Stream {
		t, err := s.opts.Client.Send(r.Context(), req.Agent, req.SendRequest)
		if err != nil {
			writeErr(w, s.log, err)
			return
		}
		writeJSON(w, http.StatusOK, APISendResponse{Task: t, Text: ResultText(t)})
		return
	}
	rc := http.NewResponseController(w)
	started := false
	for ev, err := range s.opts.Client.Stream(r.Context(), req.Agent, req.SendRequest) {
		if err != nil {
			if !started {
				writeErr(w, s.log, err)
				return
			}
			b, _ := json.Marshal(map[string]string{"message": err.Error()})
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
			_ = rc.Flush()
			return
		}
		if !started {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		b, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", EventKind(ev), b)
		_ = rc.Flush()
	}
}

// EventKind names an A2A event as the stream response's field does.
func EventKind(ev a2a.Event) string {
	switch ev.(type) {
	case *a2a.Task:
		return "task"
	case *a2a.Message:
		return "message"
	case *a2a.TaskStatusUpdateEvent:
		return "statusUpdate"
	case *a2a.TaskArtifactUpdateEvent:
		return "artifactUpdate"
	}
	return "event"
}

func (s *Server) apiTask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	target := r.URL.Query().Get("agent")
	if target == "" {
		st, err := s.opts.Tasks.Get(r.Context(), a2a.TaskID(id))
		if err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"task": st.Task, "text": ResultText(st.Task), "source": "local"})
			return
		}
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			writeErr(w, s.log, err)
			return
		}
	}
	t, err := s.opts.Client.GetTask(r.Context(), target, id)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": t, "text": ResultText(t), "source": "remote"})
}

func (s *Server) apiCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	target := r.URL.Query().Get("agent")
	if target == "" {
		if _, err := s.opts.Tasks.Get(r.Context(), a2a.TaskID(id)); err == nil {
			t, err := s.handler.CancelTask(r.Context(), &a2a.CancelTaskRequest{ID: a2a.TaskID(id)})
			if err != nil {
				writeErr(w, s.log, err)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"task": t, "source": "local"})
			return
		}
	}
	t, err := s.opts.Client.CancelTask(r.Context(), target, id)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": t, "source": "remote"})
}

// decodeBody reads a JSON body strictly, naming unknown fields.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return fmt.Errorf("%w: request body: %v", errBadRequest, err)
	}
	return nil
}
