// A2A tasks: every task this daemon's agents took over A2A, by agent and
// state, with its history; cancel one that is still running.

import { api, qs } from '../api.js';
import { h, replace, empty, errorBox, table, stateBadge, timeAgo, time, same, confirmInPage, patch } from '../dom.js';

const STATES = ['submitted', 'working', 'input-required', 'auth-required', 'completed', 'canceled', 'failed', 'rejected'];

function cancelButton(ctx, t, after) {
  if (t.terminal) return null;
  const b = h('button', { class: 'btn small danger', type: 'button', dataset: { cancel: t.id } }, 'Cancel');
  b.addEventListener('click', async () => {
    if (!await confirmInPage(`Cancel the task “${t.title || t.id}” of ${t.agent}? Its run stops.`)) return;
    b.disabled = true;
    try {
      await api.post(`/api/a2a/tasks/${encodeURIComponent(t.id)}/cancel`);
      ctx.toast('Task canceled.', 'ok');
    } catch (e) {
      ctx.toast(e.message, 'err');
    }
    after();
  });
  return b;
}

export default async function a2a(ctx) {
  const selected = ctx.params[0] || '';
  const agent = h('select', { id: 'a2a-agent', 'aria-label': 'Agent' }, h('option', { value: '' }, 'Every agent'),
    ctx.query.get('agent') ? h('option', { value: ctx.query.get('agent'), selected: true }, ctx.query.get('agent')) : null);
  const state = h('select', { id: 'a2a-state', 'aria-label': 'State' }, h('option', { value: '' }, 'Any state'),
    STATES.map((s) => h('option', { value: s, selected: ctx.query.get('state') === s }, s)));
  const listBox = h('div', { id: 'a2a-tasks' });
  const detail = h('section', { class: 'card', id: 'a2a-detail', 'aria-live': 'polite' });
  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'A2A tasks'), h('span', { class: 'sub' }, 'tasks other agents and A2A clients gave this daemon; live')),
    h('div', { class: 'split' },
      h('section', { class: 'card', 'aria-label': 'Tasks' }, h('header', null, agent, state), listBox),
      detail));

  api.get('/api/agents').then((r) => {
    for (const e of r.agents || []) {
      if (e.manifest.name !== ctx.query.get('agent')) agent.append(h('option', { value: e.manifest.name }, e.manifest.name, e.manifest.expose?.a2a ? '' : ' (not on A2A)'));
    }
  }).catch(() => {});

  let shown = null;
  const loadList = async () => {
    let r;
    try {
      r = await api.get(`/api/a2a/tasks${qs({ agent: agent.value, state: state.value, limit: 100 })}`);
    } catch (e) {
      shown = null;
      replace(listBox, e.status === 404
        ? empty('A2A is off', 'Set enabled = true in the [a2a] table of config.toml, and expose agents with [agents.expose] a2a = true.')
        : errorBox(e));
      return;
    }
    const tasks = r.tasks || [];
    if (shown && same(shown, tasks)) return;
    shown = tasks;
    patch(listBox, tasks.length === 0
      ? empty(agent.value || state.value ? 'No task matches' : 'No A2A tasks yet', 'A2A clients send tasks to /a2a/agents/<name> of agents with expose.a2a = true; each shows up here with its state.')
      : table(['Task', 'State', 'Updated'], tasks.map((t) => ({
        class: ['task-row', t.id === selected && 'selected'].filter(Boolean).join(' '),
        onclick: () => ctx.go(`#/a2a/${encodeURIComponent(t.id)}${location.hash.includes('?') ? `?${location.hash.split('?')[1]}` : ''}`),
        cells: [
          [h('a', { href: `#/a2a/${encodeURIComponent(t.id)}${location.hash.includes('?') ? `?${location.hash.split('?')[1]}` : ''}`, dataset: { task: t.id } }, t.title || '(no text)'),
            h('div', { class: 'small faint' }, h('strong', null, t.agent), ' · ', h('span', { class: 'mono' }, t.id.slice(0, 8)))],
          stateBadge(t.state), timeAgo(t.updated_at),
        ],
      })), { label: 'A2A tasks' }));
  };

  let last = null;
  async function loadDetail(force) {
    if (!selected) {
      replace(detail, empty('Pick a task', 'Its history, result and state show here; a running task can be canceled.'));
      return;
    }
    let r;
    try {
      r = await api.get(`/api/a2a/tasks/${encodeURIComponent(selected)}`);
    } catch (e) {
      replace(detail, errorBox(e));
      return;
    }
    const v = r.view;
    if (!force && last && same(last, v)) return;
    last = v;
    replace(detail,
      h('header', null, h('h2', null, v.title || v.id), stateBadge(v.state), h('span', { class: 'spacer' }),
        cancelButton(ctx, v, () => { shown = null; loadList(); loadDetail(true); })),
      h('dl', { class: 'kv' },
        h('dt', null, 'Task'), h('dd', { class: 'mono' }, v.id),
        h('dt', null, 'Agent'), h('dd', null, v.agent || '—'),
        h('dt', null, 'Session'), h('dd', null, h('a', { href: `#/sessions/${encodeURIComponent(v.context_id)}`, class: 'mono' }, v.context_id)),
        v.created_at ? [h('dt', null, 'Created'), h('dd', null, time(v.created_at))] : null,
        v.updated_at ? [h('dt', null, 'Updated'), h('dd', null, time(v.updated_at))] : null,
        v.status ? [h('dt', null, 'Status'), h('dd', { id: 'a2a-status' }, v.status)] : null),
      h('h3', null, 'History'),
      (v.history || []).length === 0 ? h('p', { class: 'faint' }, 'No messages.')
        : h('div', { class: 'transcript a2a-history' }, (v.history || []).map((m) => h('div', { class: ['msg', m.role === 'user' ? 'user' : 'assistant'] },
          h('div', { class: 'who' }, m.role === 'user' ? 'client' : v.agent || 'agent'), h('div', { class: 'bubble' }, m.text || '(no text)')))),
      v.text ? [h('h3', null, 'Result'), h('pre', { id: 'a2a-result' }, v.text)] : null);
  }

  const relist = () => {
    history.replaceState(null, '', `#/a2a${selected ? `/${encodeURIComponent(selected)}` : ''}${qs({ agent: agent.value, state: state.value })}`);
    shown = null;
    loadList();
  };
  agent.addEventListener('change', relist);
  state.addEventListener('change', relist);
  ctx.live(['a2a'], () => Promise.all([loadList(), loadDetail(false)]));
}
