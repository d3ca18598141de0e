package acpagent

import (
	"context"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

// Permission option ids offered to the editor.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optReject      = "reject_once"
)

var permissionOptions = []acp.PermissionOption{
	{OptionId: optAllowOnce, Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
	{OptionId: optAllowAlways, Name: "Always allow in this session", Kind: acp.PermissionOptionKindAllowAlways},
	{OptionId: optReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
}

// permission is a session/request_permission waiting for the editor.
type permission struct {
	req    acp.RequestPermissionRequest
	resend chan struct{} // cap 1: ask again (the editor reloaded the session)
}

// resendPending asks the editor again for every permission still
// waiting: an editor that reloads a session has lost the question.
func (ss *session) resendPending() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for p := range ss.pending {
		select {
		case p.resend <- struct{}{}:
		default:
		}
	}
}

type permissionAnswer struct {
	resp acp.RequestPermissionResponse
	err  error
}

// ask sends req and waits for the answer, sending it again (and
// withdrawing the old one) whenever the session is reloaded.
func (ss *session) ask(ctx context.Context, pr peer, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	p := &permission{req: req, resend: make(chan struct{}, 1)}
	ss.mu.Lock()
	ss.pending[p] = struct{}{}
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.pending, p)
		ss.mu.Unlock()
	}()
	for {
		actx, cancel := context.WithCancel(ctx)
		answer := make(chan permissionAnswer, 1)
		go func() {
			resp, err := pr.RequestPermission(actx, req)
			answer <- permissionAnswer{resp, err}
		}()
		select {
		case a := <-answer:
			cancel()
			return a.resp, a.err
		case <-p.resend:
			// Withdraw the old request ($/cancel_request); an answer that
			// raced the withdrawal still counts.
			cancel()
			if a := <-answer; a.err == nil {
				return a.resp, nil
			}
		case <-ctx.Done():
			cancel()
			<-answer
			return acp.RequestPermissionResponse{}, ctx.Err()
		}
	}
}

// approver answers the policy's "ask" for one turn, according to the
// session's mode: by asking the editor, or without asking.
func (s *server) approver(ss *session, r *run) tool.Approver {
	return tool.ApproverFunc(func(ctx context.Context, req tool.ApprovalRequest) (bool, error) {
		id := acp.ToolCallId(req.CallID)
		if id == "" {
			id = callID(llm.ToolCall{Name: req.Tool, Arguments: req.Args})
		}
		running := func() {
			r.send(context.WithoutCancel(ctx), s.peer, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress)))
		}
		switch ss.currentMode() {
		case modeApprove:
			running()
			return true, nil
		case modeReject:
			return false, nil
		}

		args := parseArgs(req.Args)
		content := []acp.ToolCallContent{acp.ToolContent(acp.TextBlock(req.Reason))}
		if req.Tool == toolFileWrite {
			if diff, _, ok := s.previewEdit(ctx, ss, req.Args); ok {
				content = append(content, diff)
				r.markKeep(id)
			}
		}
		resp, err := ss.ask(ctx, s.peer, acp.RequestPermissionRequest{
			SessionId: acp.SessionId(ss.id),
			ToolCall: acp.ToolCallUpdate{
				ToolCallId: id,
				Title:      acp.Ptr(title(req.Tool, args)),
				Kind:       acp.Ptr(kindOf(req.Tool)),
				Status:     acp.Ptr(acp.ToolCallStatusPending),
				Locations:  locations(ss.cwd, args),
				RawInput:   rawInput(req.Args),
				Content:    content,
			},
			Options: permissionOptions,
		})
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, fmt.Errorf("ask the editor: %s", editorErr(err))
		}
		if resp.Outcome.Selected == nil {
			// The editor answered "cancelled": the turn is being cancelled.
			return false, nil
		}
		switch string(resp.Outcome.Selected.OptionId) {
		case optAllowAlways:
			ss.remember(req.Tool)
			r.allowAlways(req.Tool)
			running()
			return true, nil
		case optAllowOnce:
			running()
			return true, nil
		}
		return false, nil
	})
}
