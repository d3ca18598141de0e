// MCP → A2A bridge peer: an @a2a-js/sdk agent (A2A 1.0, JSON-RPC, express
// 5) that agentd serves to MCP clients as a tool. What it does depends on
// the message text:
//
//   long     streams five working status updates, then completes
//   forever  streams working updates until canceled (GET /stats lists
//            the tasks canceled)
//   ask      turns input-required ("What is your name?"); the next message
//            on the same task completes it with "hello NAME"
//   count    answers how many messages its context has seen
//   files    completes with a text, a URL file and a byte file artifact
//   anything else: completes with "js agent got: TEXT"
//
// Usage: node bridge-a2a-agent.mjs [TOKEN]. Listens on 127.0.0.1 (a free
// port), prints {"url": ...} once ready, exits when stdin closes.
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const [token = ''] = process.argv.slice(2);
const canceled = new Set();
const cancelRequested = new Set();
const contexts = new Map(); // contextId → messages seen
const contextOf = new Map(); // taskId → contextId

const text = (t) => ({ content: { $case: 'text', value: t } });
const now = () => new Date().toISOString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: 'js-bridge-agent',
    description: 'An @a2a-js/sdk agent that streams, asks for input and returns files.',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'demo', name: 'Demo', description: 'Streams, asks, returns files', tags: ['demo'] }],
  };
  const agentMessage = (ctx, parts) => ({ messageId: randomUUID(), role: Role.ROLE_AGENT, parts, taskId: ctx.taskId, contextId: ctx.contextId });
  const status = (ctx, state, msg) =>
    AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state, timestamp: now(), ...(msg ? { message: agentMessage(ctx, [text(msg)]) } : {}) } });
  const complete = (ctx, bus, artifacts, msg) => {
    for (const a of artifacts) bus.publish(AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, artifact: a, append: false, lastChunk: true }));
    bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED, msg));
    bus.finished();
  };
  const textArtifact = (t) => ({ artifactId: randomUUID(), name: 'answer', parts: [text(t)] });

  const executor = {
    async execute(ctx, bus) {
      const said = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      contexts.set(ctx.contextId, (contexts.get(ctx.contextId) ?? 0) + 1);
      contextOf.set(ctx.taskId, ctx.contextId);
      const history = ctx.task ? [...(ctx.task.history ?? []), ctx.userMessage] : [ctx.userMessage];
      bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: TaskState.TASK_STATE_WORKING, timestamp: now() }, history, artifacts: ctx.task?.artifacts ?? [] }));

      if (ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        complete(ctx, bus, [textArtifact(`hello ${said}`)]);
        return;
      }
      switch (said) {
        case 'long':
          for (let i = 1; i <= 5; i++) {
            await sleep(80);
            bus.publish(status(ctx, TaskState.TASK_STATE_WORKING, `step ${i}/5`));
          }
          complete(ctx, bus, [textArtifact('long done')]);
          return;
        case 'forever':
          for (let i = 1; !cancelRequested.has(ctx.taskId); i++) {
            bus.publish(status(ctx, TaskState.TASK_STATE_WORKING, `tick ${i}`));
            await sleep(50);
          }
          return;
        case 'ask':
          bus.publish(status(ctx, TaskState.TASK_STATE_INPUT_REQUIRED, 'What is your name?'));
          bus.finished();
          return;
        case 'count':
          complete(ctx, bus, [textArtifact(`${contexts.get(ctx.contextId)} messages in this context`)]);
          return;
        case 'files':
          complete(ctx, bus, [
            textArtifact('here are your files'),
            {
              artifactId: randomUUID(),
              name: 'files',
              parts: [
                { content: { $case: 'url', value: 'https://example.com/report.pdf' }, filename: 'report.pdf', mediaType: 'application/pdf' },
                { content: { $case: 'raw', value: Buffer.from('plain bytes') }, filename: 'notes.txt', mediaType: 'text/plain' },
              ],
            },
          ]);
          return;
        default:
          complete(ctx, bus, [textArtifact(`js agent got: ${said}`)]);
      }
    },
    async cancelTask(taskId, bus) {
      cancelRequested.add(taskId);
      canceled.add(taskId);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: contextOf.get(taskId) ?? '', status: { state: TaskState.TASK_STATE_CANCELED, timestamp: now() } }));
      bus.finished();
    },
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.get('/stats', (req, res) => res.json({ canceled: [...canceled] }));
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/rpc', (req, res, next) => {
    if (token && req.get('authorization') !== `Bearer ${token}`) {
      res.status(401).json({ error: 'unauthorized' });
      return;
    }
    next();
  }, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(JSON.stringify({ url: base }));
});

process.stdin.on('end', () => server.close(() => process.exit(0)));
process.stdin.resume();
