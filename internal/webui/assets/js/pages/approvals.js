// Approvals: tool calls that need a human's yes, from runs whose edge
// cannot ask (the HTTP API, MCP clients without elicitation), and A2A
// tasks waiting for their client's answer to an approval question. Each
// waits until someone decides here, or its timeout denies it.

import { api } from '../api.js';
import { h, replace, badge, empty, errorBox, pretty, timeAgo, same, patch } from '../dom.js';

/** decisionButtons are the three answers to an operator approval. */
export function decisionButtons(ctx, a, after) {
  const send = async (decision, label) => {
    try {
      await api.post(`/api/approvals/${encodeURIComponent(a.id)}`, { decision });
      ctx.toast(`${a.tool}: ${label}.`, decision === 'reject' ? '' : 'ok');
    } catch (e) {
      ctx.toast(e.message, 'err');
    }
    after();
  };
  return h('div', { class: 'actions' },
    h('button', { class: 'btn ok', type: 'button', dataset: { decision: 'once' }, onclick: () => send('once', 'approved once') }, 'Approve once'),
    h('button', { class: 'btn', type: 'button', dataset: { decision: 'session' }, title: 'Also approve later calls of this tool in this session', onclick: () => send('session', 'approved for the session') }, 'Always in this session'),
    h('button', { class: 'btn danger', type: 'button', dataset: { decision: 'reject' }, onclick: () => send('reject', 'rejected') }, 'Reject'));
}

function left(deadline) {
  const s = Math.max(0, Math.round((new Date(deadline) - Date.now()) / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function elapsed(since) {
  const s = Math.max(0, Math.round((Date.now() - new Date(since)) / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function approvalCard(ctx, a, after) {
  const countdown = h('span', { class: 'badge warn countdown', title: 'Denied when the time runs out', dataset: { deadline: a.deadline } }, `denied in ${left(a.deadline)}`);
  return h('article', { class: 'card approval', dataset: { approval: a.id, tool: a.tool } },
    h('header', null, h('h2', { class: 'mono' }, a.tool), badge(a.agent, 'info'), h('span', { class: 'spacer' }), countdown),
    h('p', null, a.reason),
    h('dl', { class: 'kv' },
      h('dt', null, 'Session'), h('dd', null, a.session_id ? h('a', { href: `#/sessions/${encodeURIComponent(a.session_id)}`, class: 'mono' }, a.session_id) : '—'),
      h('dt', null, 'Started by'), h('dd', null, a.principal || '—'),
      h('dt', null, 'Asked'), h('dd', null, timeAgo(a.created))),
    h('div', { class: 'section-label small faint' }, 'Arguments'),
    h('pre', null, pretty(a.args || {})),
    decisionButtons(ctx, a, after));
}

function a2aCard(ctx, t, after) {
  const reply = async (approved) => {
    try {
      await api.post(`/api/a2a/tasks/${encodeURIComponent(t.id)}/reply`, { approved });
      ctx.toast(approved ? 'Approved: the task resumes.' : 'Rejected: the task resumes without the call.', approved ? 'ok' : '');
    } catch (e) {
      ctx.toast(e.message, 'err');
    }
    after();
  };
  const ap = t.approval;
  const since = t.updated_at || t.created_at;
  // A2A questions have no deadline (the task waits for its client): the
  // clock counts how long it has waited instead of down to a denial.
  const waited = h('span', { class: 'badge warn countup', title: 'A2A approvals wait for their client; no timeout denies them', dataset: { since } }, `waiting ${elapsed(since)}`);
  return h('article', { class: 'card approval', dataset: { task: t.id, tool: ap?.tool || '' } },
    h('header', null, h('h2', { class: ap ? 'mono' : '' }, ap ? ap.tool : (t.title || t.id)), badge(t.agent, 'info'), badge('A2A · input-required', 'warn'), h('span', { class: 'spacer' }), waited),
    ap ? [
      ap.reason ? h('p', null, ap.reason) : null,
      h('dl', { class: 'kv' }, h('dt', null, 'Task'), h('dd', null, t.title || t.id), h('dt', null, 'Asked'), h('dd', null, since ? timeAgo(since) : '—')),
      h('div', { class: 'section-label small faint' }, 'Arguments'),
      h('pre', { class: 'approval-args' }, pretty(ap.arguments ?? {})),
    ] : h('p', null, t.status || 'The task waits for its client.'),
    h('p', { class: 'small faint' }, 'The A2A client was asked; if it cannot answer, answer for it here. ', h('a', { href: `#/a2a/${encodeURIComponent(t.id)}` }, 'Task details')),
    h('div', { class: 'actions' },
      h('button', { class: 'btn ok', type: 'button', dataset: { reply: 'yes' }, onclick: () => reply(true) }, 'Approve'),
      h('button', { class: 'btn danger', type: 'button', dataset: { reply: 'no' }, onclick: () => reply(false) }, 'Reject')));
}

export default async function approvals(ctx) {
  const box = h('div', { id: 'approvals-list', class: 'stack' });
  const sub = h('span', { class: 'sub' }, 'calls that wait for a decision');
  replace(ctx.main, h('div', { class: 'page-head' }, h('h1', null, 'Approvals'), sub), box);
  let shown = null;
  const load = async () => {
    let ops;
    let tasks = [];
    try {
      ops = await api.get('/api/approvals');
    } catch (e) {
      replace(box, errorBox(e));
      shown = null;
      return;
    }
    try {
      tasks = ((await api.get('/api/a2a/tasks?state=input-required')).tasks || []).filter((t) => t.approval || /approval/i.test(t.status || ''));
    } catch { /* A2A off */ }
    const list = ops.approvals || [];
    const key = [list.map((a) => a.id), tasks.map((t) => t.id)];
    if (shown && same(shown, key)) return;
    shown = key;
    const mins = Math.round((ops.timeout_seconds || 300) / 60);
    sub.textContent = `calls that wait for a decision; each is denied after ${mins} min without one`;
    const again = () => { shown = null; load(); };
    patch(box, list.length === 0 && tasks.length === 0
      ? empty('Nothing waits for you', `A call that needs approval (an "ask" rule once untrusted data is in the run, or a principal's ask_tools) waits here when the client that started the run cannot be asked: the HTTP API, an MCP client without elicitation, an A2A client that does not answer. It is denied after ${mins} min.`)
      : [list.map((a) => approvalCard(ctx, a, again)), tasks.map((t) => a2aCard(ctx, t, again))]);
  };
  // Approvals waiting or decided, and A2A tasks entering or leaving
  // input-required (or any change while one waits here).
  ctx.live(['approvals', 'a2a'], load, { accept: (c) => c.topic === 'approvals' || c.what === 'input-required' || (shown && shown[1].length > 0) });
  ctx.every(1000, () => {
    for (const c of box.querySelectorAll('.countdown')) c.textContent = `denied in ${left(c.dataset.deadline)}`;
    for (const c of box.querySelectorAll('.countup')) c.textContent = `waiting ${elapsed(c.dataset.since)}`;
  });
}
