package acpagent

import "github.com/agentd/agentd/internal/agent"

// startTainted makes a turn start with untrusted data in context when the
// editor's prompts are labelled untrusted, so the policy's untrusted rules
// (file_write and shell_exec ask, by default) apply from the first call.
func startTainted(req *agent.RunRequest, untrusted bool) {
	req.Tainted = req.Tainted || untrusted
}
