// Sessions: every conversation the principal may see, whatever protocol
// started it; search, read the transcript, continue it in Chat, delete.

import { api, qs } from '../api.js';
import { h, replace, badge, empty, errorBox, timeAgo, time, debounce, same, confirmInPage, patch } from '../dom.js';
import { Transcript } from '../transcript.js';

const PAGE = 50;

export default async function sessions(ctx) {
  const selected = ctx.params[0] || '';
  const search = h('input', { type: 'search', id: 'session-search', placeholder: 'Search titles, messages, ids…', value: ctx.query.get('q') || '', 'aria-label': 'Search sessions' });
  const agentSel = h('select', { id: 'session-agent', 'aria-label': 'Agent' }, h('option', { value: '' }, 'All agents'));
  const list = h('div', { class: 'list', id: 'session-list', role: 'list' });
  const more = h('button', { class: 'btn small', type: 'button', hidden: true }, 'Load more');
  const detail = h('section', { class: 'card', id: 'session-detail', 'aria-live': 'polite' });
  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Sessions'), h('span', { class: 'sub' }, 'conversations from every protocol: HTTP, MCP, A2A, ACP, the CLI')),
    h('div', { class: 'split' },
      h('section', { class: 'card stack', 'aria-label': 'Session list' }, search, agentSel, list, more),
      detail));

  api.get('/api/agents').then((r) => {
    for (const e of r.agents || []) agentSel.append(h('option', { value: e.manifest.name, selected: e.manifest.name === ctx.query.get('agent') }, e.manifest.name));
  }).catch(() => {});

  let limit = PAGE;
  let shown = null;
  async function loadList() {
    const q = search.value.trim();
    let r;
    try {
      r = await api.get(`/api/sessions${qs({ q, agent: agentSel.value, limit: limit + 1 })}`);
    } catch (e) {
      replace(list, errorBox(e));
      return;
    }
    const all = r.sessions || [];
    more.hidden = all.length <= limit;
    const ss = all.slice(0, limit);
    if (shown && same(shown, ss)) return;
    shown = ss;
    if (ss.length === 0) {
      patch(list, q || agentSel.value
        ? empty('No session matches', 'Try other words, or clear the filters.')
        : empty('No sessions yet', 'Start one on the ', h('a', { href: '#/chat' }, 'Chat'), ' page, or from any MCP, A2A or ACP client.'));
      return;
    }
    patch(list, ss.map((s) => h('a', {
      class: 'list-item', role: 'listitem', href: `#/sessions/${encodeURIComponent(s.id)}${location.hash.includes('?') ? `?${location.hash.split('?')[1]}` : ''}`,
      'aria-current': s.id === selected ? 'true' : null, dataset: { session: s.id },
    },
    h('span', { class: 'title' }, s.title || '(untitled)'),
    h('span', { class: 'meta' }, h('strong', null, s.agent), badge(s.origin || '?', 'info'), s.principal ? badge(s.principal) : null, timeAgo(s.updated_at)))));
  }

  const relist = debounce(() => {
    limit = PAGE;
    const q = search.value.trim();
    history.replaceState(null, '', `#/sessions${selected ? `/${encodeURIComponent(selected)}` : ''}${qs({ q, agent: agentSel.value })}`);
    loadList();
  }, 250);
  search.addEventListener('input', relist);
  agentSel.addEventListener('change', relist);
  more.addEventListener('click', () => { limit += PAGE; loadList(); });

  let updated = '';
  async function loadDetail() {
    if (!selected) {
      replace(detail, empty('Pick a session', 'Its transcript shows here: messages, thinking, tool calls and their results.'));
      return;
    }
    let s;
    try {
      s = await api.get(`/api/sessions/${encodeURIComponent(selected)}`);
    } catch (e) {
      replace(detail, errorBox(e));
      return;
    }
    if (s.updated_at === updated) return;
    updated = s.updated_at;
    const log = h('div', { class: 'transcript', id: 'session-transcript', role: 'log', 'aria-label': 'Transcript' });
    const del = h('button', { class: 'btn danger', type: 'button', id: 'session-delete' }, 'Delete');
    del.addEventListener('click', async () => {
      if (!await confirmInPage(`Delete the session “${s.title || s.id}” and its ${s.messages?.length || 0} messages? This cannot be undone.`)) return;
      try {
        await api.del(`/api/sessions/${encodeURIComponent(s.id)}`);
        ctx.toast('Session deleted.', 'ok');
        ctx.go('#/sessions');
      } catch (e) {
        ctx.toast(e.message, 'err');
      }
    });
    replace(detail,
      h('header', null, h('h2', null, s.title || '(untitled)'), h('span', { class: 'spacer' }),
        h('a', { class: 'btn primary', href: `#/chat/${encodeURIComponent(s.agent)}/${encodeURIComponent(s.id)}`, id: 'session-continue' }, 'Continue in chat'), del),
      h('dl', { class: 'kv' },
        h('dt', null, 'Agent'), h('dd', null, s.agent),
        h('dt', null, 'Started over'), h('dd', null, s.origin || '?'),
        h('dt', null, 'Principal'), h('dd', null, s.principal || '—'),
        h('dt', null, 'Created'), h('dd', null, time(s.created_at)),
        h('dt', null, 'Updated'), h('dd', null, time(s.updated_at)),
        h('dt', null, 'Id'), h('dd', { class: 'mono' }, s.id),
        h('dt', null, 'Messages'), h('dd', null, String(s.messages?.length || 0))),
      h('hr', { class: 'faint' }),
      log);
    const tr = new Transcript(log, s.agent);
    (s.messages || []).forEach((m) => tr.message(m));
    if (!(s.messages || []).length) replace(log, empty('No messages', 'This session is empty.'));
  }

  // A run that ended changed a session (new messages, a new session).
  ctx.live(['runs'], () => Promise.all([loadList(), loadDetail()]), { accept: (c) => c.what !== 'started', gap: 1000 });
}
