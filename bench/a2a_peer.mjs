// A2A peer for agentd's benchmark: an @a2a-js/sdk 1.3.0 JSON-RPC server
// whose executor answers at once with the events agentd's A2A edge sends
// for an instant agent (task working, one text artifact, completed).
// Usage: node a2a_peer.mjs PORT  (binds 127.0.0.1; prints "listening PORT").
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const port = Number(process.argv[2] ?? 0);
const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });
const status = (state, message) => ({ state, message, timestamp: new Date().toISOString() });
const executor = {
  async execute(rc, bus) {
    const { taskId, contextId } = rc;
    bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), artifacts: [], history: [rc.userMessage], metadata: undefined }));
    bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: false, lastChunk: true, metadata: undefined,
      artifact: { artifactId: crypto.randomUUID(), name: 'response', description: '', parts: [text('ok')], metadata: undefined, extensions: [] } }));
    const reply = { messageId: crypto.randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [text('ok')], metadata: undefined, extensions: [], referenceTaskIds: [] };
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, reply), metadata: undefined }));
    bus.finished();
  },
  async cancelTask() {},
};
const app = express();
const card = { name: 'instant', description: 'benchmark peer', version: '1.0.0', provider: undefined,
  supportedInterfaces: [{ url: `http://127.0.0.1:${port}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] }, securitySchemes: {}, securityRequirements: [],
  defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [], signatures: [] };
const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const srv = app.listen(port, '127.0.0.1', () => console.log(`listening ${srv.address().port}`));
