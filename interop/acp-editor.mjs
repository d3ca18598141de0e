// acp-editor.mjs plays an ACP editor (built on @agentclientprotocol/sdk)
// against `agentd acp`, as Zed would: initialize, a session with an MCP
// server of the editor's own, a prompt whose file edit needs permission, a
// cancel in the middle of a turn (timed), then a restart of the agent and
// session/load. It is driven by internal/acpagent's interop test, which
// scripts the model; it prints one JSON object with what it saw and exits
// non-zero on the first check that fails.
//
// Usage: node acp-editor.mjs '{"agentd":BIN,"config":FILE,"cwd":DIR,"node":NODE,"everything":JS}'

import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { performance } from "node:perf_hooks";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const opts = JSON.parse(process.argv[2]);
const report = { checks: [] };

function check(cond, what, detail) {
  report.checks.push(what);
  if (!cond) {
    throw new Error(`check failed: ${what}${detail === undefined ? "" : ": " + JSON.stringify(detail)}`);
  }
}

// An editor connected to a fresh `agentd acp` process.
function startEditor() {
  const child = spawn(opts.agentd, ["--config", opts.config, "acp"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const state = { updates: [], permissions: [], waiters: [] };
  const app = client({ name: "acp-interop-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      state.updates.push(params);
      state.waiters = state.waiters.filter((w) => !w(params));
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      state.permissions.push(params);
      const allow = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .onRequest(methods.client.fs.readTextFile, async ({ params }) => ({
      content: await readFile(params.path, "utf8"),
    }))
    .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
      await writeFile(params.path, params.content);
      return {};
    });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  // Resolves with the first update (from now on) that matches pred.
  state.next = (pred) =>
    new Promise((resolve) => state.waiters.push((u) => (pred(u) ? (resolve(u), true) : false)));
  return { child, exited, state, app, stream };
}

const initParams = {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
  clientInfo: { name: "acp-interop-editor", version: "1.0.0" },
};

const textOf = (updates, kind) =>
  updates
    .filter((n) => n.update.sessionUpdate === kind)
    .map((n) => n.update.content.text)
    .join("");

const contentText = (u) =>
  (u.content ?? [])
    .filter((c) => c.type === "content" && c.content.type === "text")
    .map((c) => c.content.text)
    .join("");

async function firstRun() {
  const ed = startEditor();
  let sessionId;
  await ed.app.connectWith(ed.stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, initParams);
    check(init.protocolVersion === 1, "initialize: protocolVersion is the integer 1", init.protocolVersion);
    check(init.agentInfo?.name === "agentd-interop" && init.agentInfo?.version === "9.9.9", "initialize: agentInfo from [acp]", init.agentInfo);
    check(init.agentCapabilities?.loadSession === true, "initialize: loadSession", init.agentCapabilities);
    check(init.agentCapabilities?.mcpCapabilities?.http === true, "initialize: mcpCapabilities", init.agentCapabilities);
    check(Array.isArray(init.authMethods), "initialize: authMethods", init.authMethods);

    const created = await ctx.request(methods.agent.session.new, {
      cwd: opts.cwd,
      mcpServers: [
        { name: "everything", command: opts.node, args: [opts.everything], env: [{ name: "ACP_INTEROP", value: "from-the-editor" }] },
      ],
    });
    sessionId = created.sessionId;
    check(typeof sessionId === "string" && sessionId.length > 0, "session/new: a session id", created);
    check(created.modes?.currentModeId === "ask", "session/new: modes", created.modes);

    // A turn with the editor's MCP tools and an edit that needs approval,
    // in the editor's trace (W3C trace context in _meta, as ACP reserves).
    const first = await ctx.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "use the tools" }],
      _meta: { traceparent: "00-3bf92f3577b34da6a3ce929d0e0e4733-30f067aa0ba902b3-01" },
    });
    check(first.stopReason === "end_turn", "prompt: end_turn", first);
    const calls = ed.state.updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call");
    const finished = ed.state.updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call_update" && u.status);
    const byTitle = (p) => calls.find((c) => c.title.startsWith(p));
    const echo = byTitle("mcp_everything_echo");
    check(echo && echo.kind === "other" && echo.status === "pending", "tool_call for the editor's MCP tool", calls);
    const echoDone = finished.find((u) => u.toolCallId === echo.toolCallId && u.status === "completed");
    check(echoDone && contentText(echoDone).includes("Echo: hi"), "the editor's MCP server answered through agentd", echoDone);
    const envCall = byTitle("mcp_everything_get_env");
    const envDone = finished.find((u) => u.toolCallId === envCall?.toolCallId && u.status === "completed");
    const envText = envDone ? contentText(envDone) : "";
    check(envText.includes("from-the-editor"), "the editor's env reached its MCP server", envText.slice(0, 200));
    check(!envText.includes("INTEROP_AGENTD_SECRET"), "agentd's own environment did not reach the editor's MCP server");
    const write = byTitle("file_write");
    check(write && write.kind === "edit" && write.locations?.[0]?.path === `${opts.cwd}/hello.txt`, "tool_call for file_write: kind edit, location", write);
    check(ed.state.permissions.length === 1 && ed.state.permissions[0].toolCall.toolCallId === write.toolCallId, "file_write asked for permission", ed.state.permissions);
    const kinds = ed.state.permissions[0].options.map((o) => o.kind).sort().join(",");
    check(kinds === "allow_always,allow_once,reject_once", "permission options", kinds);
    const diff = ed.state.updates
      .map((n) => n.update)
      .flatMap((u) => (u.toolCallId === write.toolCallId ? u.content ?? [] : []))
      .find((c) => c.type === "diff");
    check(diff && diff.newText === "hi from agentd\n" && diff.oldText === "old text\n", "file_write showed a diff of the editor's file", diff);
    check((await readFile(`${opts.cwd}/hello.txt`, "utf8")) === "hi from agentd\n", "the edit went through fs/write_text_file");
    check(textOf(ed.state.updates, "agent_message_chunk") === "All done.", "agent text", textOf(ed.state.updates, "agent_message_chunk"));

    // A slow turn, cancelled once it has started to answer.
    const started = ed.state.next((u) => u.update.sessionUpdate === "agent_message_chunk");
    const slow = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "count slowly" }] });
    await started;
    const t0 = performance.now();
    await ctx.notify(methods.agent.session.cancel, { sessionId });
    const cancelled = await slow;
    report.cancelMs = performance.now() - t0;
    check(cancelled.stopReason === "cancelled", "cancel: stopReason cancelled", cancelled);
    check(report.cancelMs < 200, "cancel: answered within 200 ms", report.cancelMs);
  });
  ed.child.stdin.end();
  const exit = await ed.exited;
  check(exit.code === 0, "agentd acp exits cleanly when the editor leaves", exit);
  report.sessionId = sessionId;
  return sessionId;
}

async function secondRun(sessionId) {
  const ed = startEditor();
  await ed.app.connectWith(ed.stream, async (ctx) => {
    await ctx.request(methods.agent.initialize, initParams);
    const list = await ctx.request(methods.agent.session.list, {});
    check(list.sessions.some((s) => s.sessionId === sessionId), "session/list shows the session", list);
    const loaded = await ctx.request(methods.agent.session.load, { sessionId, cwd: opts.cwd, mcpServers: [] });
    check(loaded.modes?.currentModeId === "ask", "session/load: modes", loaded);
    const ups = ed.state.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
    const userText = ups.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
    check(userText.includes("use the tools") && userText.includes("count slowly"), "load replays the user's messages", userText);
    const replayedCalls = ups.filter((u) => u.sessionUpdate === "tool_call").map((u) => `${u.title}:${u.status}`);
    check(replayedCalls.includes("mcp_everything_echo:completed") && replayedCalls.includes("file_write: hello.txt:completed"), "load replays the tool calls", replayedCalls);
    check(textOf(ed.state.updates, "agent_message_chunk") === "All done.", "load replays the agent's text");
    report.replayed = ups.length;
  });
  ed.child.stdin.end();
  const exit = await ed.exited;
  check(exit.code === 0, "second agentd acp exits cleanly", exit);
}

try {
  await writeFile(`${opts.cwd}/hello.txt`, "old text\n");
  const id = await firstRun();
  await secondRun(id);
  report.ok = true;
  console.log(JSON.stringify(report));
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
  console.log(JSON.stringify(report));
  process.exit(1);
}
