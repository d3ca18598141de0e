// A2A interop server: a minimal @a2a-js/sdk agent (express 5) that agentd
// delegates to as an external agent. It answers "js agent got: <text>" as
// a completed task with one artifact, and checks the bearer token. A text
// starting with "answer with a message" is answered with a Message (no
// task): "js agent says: <text>".
//
// Usage: node a2a-server.mjs MODE TOKEN [trace]
//   MODE v1  serves A2A 1.0 only; MODE v03 serves only a 0.3 JSON-RPC
//   interface (legacyCompat). Listens on 127.0.0.1 (a free port) and
//   prints {"url": ...} on stdout once ready. With "trace", the answer
//   ends with " traceparent=<the request's traceparent header>", so a
//   test can see the W3C trace context agentd passed on. A2A_PUBLIC_HOST, if
//   set, is the host its card names (it still listens on 127.0.0.1).
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const [mode = 'v1', token = '', flag = ''] = process.argv.slice(2);
const legacy = mode === 'v03';
const echoTrace = flag === 'trace';
// The traceparent of the JSON-RPC request being served: the executor runs
// within it, and the tests send one request at a time.
let traceparent = '';

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  // A2A_PUBLIC_HOST names the agent in its card by another host (one a
  // test reaches through a proxy), with this server's port.
  const base = `http://${process.env.A2A_PUBLIC_HOST ?? '127.0.0.1'}:${server.address().port}`;
  const card = {
    name: 'js-agent',
    description: 'An @a2a-js/sdk test agent that echoes.',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: legacy ? '0.3' : '1.0' }],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the message', tags: ['echo'] }],
  };
  const executor = {
    async execute(ctx, bus) {
      const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      if (text.startsWith('answer with a message')) {
        bus.publish(AgentEvent.message({
          messageId: randomUUID(),
          role: Role.ROLE_AGENT,
          contextId: ctx.contextId,
          parts: [{ content: { $case: 'text', value: `js agent says: ${text}` } }],
        }));
        bus.finished();
        return;
      }
      bus.publish(AgentEvent.task({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: new Date().toISOString() },
        history: [ctx.userMessage],
        artifacts: [{ artifactId: randomUUID(), name: 'echo', parts: [{ content: { $case: 'text', value: `js agent got: ${text}` + (echoTrace ? ` traceparent=${traceparent}` : '') } }] }],
      }));
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      bus.finished();
    },
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const compat = legacy ? { legacyCompat: { enabled: true } } : {};
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, ...compat }));
  app.use('/rpc', (req, res, next) => {
    if (token && req.get('authorization') !== `Bearer ${token}`) {
      res.status(401).json({ error: 'unauthorized' });
      return;
    }
    traceparent = req.get('traceparent') ?? '';
    next();
  }, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, ...compat }));
  console.log(JSON.stringify({ url: base, role: Role.ROLE_AGENT }));
});

process.stdin.on('end', () => server.close(() => process.exit(0)));
process.stdin.resume();
