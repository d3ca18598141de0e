// acp-first-prompt.mjs: an ACP editor (@agentclientprotocol/sdk) that
// starts `agentd acp` and prompts at once, as an editor does when the user
// types before agentd is fully up: initialize, session/new without MCP
// servers of its own, one prompt. The model (scripted by the Go test)
// calls a tool of a server configured in agentd's own config, which is
// still connecting when agentd starts. Prints one JSON object: the tool
// calls' final statuses and texts, and the agent's text.
//
// Usage: node acp-first-prompt.mjs AGENTD_BIN CONFIG CWD
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const [bin, config, cwd] = process.argv.slice(2);
const child = spawn(bin, ["--config", config, "acp"], { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const updates = [];
const app = client({ name: "acp-first-prompt" }).onNotification(methods.client.session.update, ({ params }) => {
  updates.push(params.update);
});
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const report = {};
await app.connectWith(stream, async (ctx) => {
  await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "acp-first-prompt", version: "1.0.0" } });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const res = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo hi" }] });
  report.stopReason = res.stopReason;
});
const text = (u) => (u.content ?? []).filter((c) => c.type === "content" && c.content.type === "text").map((c) => c.content.text).join("");
report.calls = updates.filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"))
  .map((u) => ({ status: u.status, text: text(u) }));
report.agentText = updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
child.stdin.end();
report.exit = await exited;
console.log(JSON.stringify(report));
