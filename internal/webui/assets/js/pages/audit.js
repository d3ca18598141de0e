// The audit log: one record per tool call, whatever its origin, with the
// policy's decision and the outcome. Filters live in the URL, so a
// filtered view can be bookmarked or linked to.

import { api, qs } from '../api.js';
import { h, replace, badge, stateBadge, empty, errorBox, table, field, time, debounce, same, patch } from '../dom.js';

const DECISIONS = ['allow', 'deny', 'approved', 'rejected'];
const OUTCOMES = ['ok', 'error', 'denied', 'cancelled', 'timeout'];

// toLocalInput turns an RFC 3339 time into a datetime-local value.
function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export default async function audit(ctx) {
  const q = ctx.query;
  const agent = h('select', { name: 'agent' }, h('option', { value: '' }, 'Any'),
    q.get('agent') ? h('option', { value: q.get('agent'), selected: true }, q.get('agent')) : null);
  // Principals other than admins see their own records whatever they ask.
  const principal = h('input', { type: 'search', name: 'principal', value: ctx.session.admin ? q.get('principal') || '' : ctx.session.principal,
    disabled: !ctx.session.admin, placeholder: 'exact name', list: 'audit-principals', autocomplete: 'off', title: ctx.session.admin ? null : 'you see your own records only' });
  const principalNames = h('datalist', { id: 'audit-principals' });
  const session = h('input', { type: 'search', name: 'session_id', value: q.get('session_id') || '', placeholder: 'session id', autocomplete: 'off' });
  const tool = h('input', { type: 'search', name: 'tool', value: q.get('tool') || '', placeholder: 'part of a name, or mcp_*_list', title: 'a part of the tool name, or a pattern with * (any characters) and ? (one character)', list: 'audit-tools', autocomplete: 'off' });
  const toolNames = h('datalist', { id: 'audit-tools' });
  const decision = h('select', { name: 'decision' }, h('option', { value: '' }, 'Any'), DECISIONS.map((d) => h('option', { value: d, selected: q.get('decision') === d }, d)));
  const outcome = h('select', { name: 'outcome' }, h('option', { value: '' }, 'Any'), OUTCOMES.map((d) => h('option', { value: d, selected: q.get('outcome') === d }, d)));
  const since = h('input', { type: 'datetime-local', name: 'since', value: toLocalInput(q.get('since')) });
  const until = h('input', { type: 'datetime-local', name: 'until', value: toLocalInput(q.get('until')) });
  const limit = h('select', { name: 'limit' }, ['50', '200', '1000'].map((n) => h('option', { value: n, selected: (q.get('limit') || '200') === n }, n)));
  const reset = h('button', { class: 'btn', type: 'button', id: 'audit-clear' }, 'Clear filters');
  const form = h('form', { class: 'filters card', id: 'audit-filters', 'aria-label': 'Filters' },
    field('Agent', agent, { name: 'agent' }), field('Principal', principal, { name: 'principal' }), field('Session', session, { name: 'session_id' }), field('Tool', tool, { name: 'tool' }),
    field('Decision', decision, { name: 'decision' }), field('Outcome', outcome, { name: 'outcome' }),
    field('From', since, { name: 'since' }), field('Until', until, { name: 'until' }), field('Show', limit, { name: 'limit' }),
    h('div', { class: 'field' }, reset), toolNames, principalNames);
  // The page's offset: the API answers one window of the log and its
  // total, so a long log is paged, not cut.
  let offset = Math.max(0, parseInt(q.get('offset') || '0', 10) || 0);
  const newer = h('button', { class: 'btn', type: 'button', id: 'audit-newer' }, 'Newer');
  const older = h('button', { class: 'btn', type: 'button', id: 'audit-older' }, 'Older');
  const results = h('section', { class: 'card', id: 'audit-results', 'aria-live': 'polite' });
  const exportJSON = h('button', { class: 'btn small', type: 'button', id: 'audit-export-json' }, 'Export JSON');
  const exportCSV = h('button', { class: 'btn small', type: 'button', id: 'audit-export-csv' }, 'Export CSV');
  const open = new Set(); // ids of the rows shown with their detail
  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Audit log'), h('span', { class: 'sub' }, 'every tool call, its decision and outcome; arguments are kept only as a digest')),
    form, results);

  Promise.all([api.get('/api/agents'), api.get('/api/tools')]).then(([a, t]) => {
    for (const name of [...(a.agents || []).map((e) => e.manifest.name), 'operator']) {
      if (name === q.get('agent')) continue;
      agent.append(h('option', { value: name, selected: q.get('agent') === name }, name === 'operator' ? 'operator (calls by hand)' : name));
    }
    for (const sp of t.tools || []) toolNames.append(h('option', { value: sp.name }));
  }).catch(() => {});
  if (ctx.session.admin) {
    api.get('/api/principals').then((r) => {
      for (const p of r.principals || []) principalNames.append(h('option', { value: p.name }));
    }).catch(() => {});
  }

  const params = () => {
    const iso = (el) => (el.value ? new Date(el.value).toISOString().replace(/\.\d{3}Z$/, 'Z') : '');
    return { agent: agent.value, principal: ctx.session.admin ? principal.value.trim() : '', session_id: session.value.trim(), tool: tool.value.trim(), decision: decision.value, outcome: outcome.value, since: iso(since), until: iso(until), limit: limit.value, offset: offset || '' };
  };

  let shown = null;
  const load = async () => {
    const p = params();
    let r;
    try {
      r = await api.get(`/api/audit${qs(p)}`);
    } catch (e) {
      replace(results, errorBox(e));
      shown = null;
      return;
    }
    const recs = r.records || [];
    const total = r.total || 0;
    if (shown && same(shown, { recs, total })) return;
    shown = { recs, total };
    const filtered = Object.entries(p).some(([k, v]) => v && k !== 'limit' && k !== 'offset');
    newer.disabled = offset === 0;
    older.disabled = offset + recs.length >= total;
    const range = recs.length ? `${(offset + 1).toLocaleString()}–${(offset + recs.length).toLocaleString()} of ` : '';
    patch(results,
      h('header', null, h('h2', { id: 'audit-count' }, `${range}${total.toLocaleString()} record${total === 1 ? '' : 's'}`), h('span', { class: 'spacer' }),
        h('span', { class: 'hint' }, 'newest first; live'), total ? h('span', { class: 'pager' }, exportJSON, ' ', exportCSV) : null,
        total > recs.length ? h('span', { class: 'pager' }, newer, ' ', older) : null),
      recs.length === 0
        ? empty(filtered ? 'No call matches these filters' : 'No tool calls yet', filtered ? 'Widen the time range or clear a filter.' : 'Every call an agent (or you, on the Tools page) makes is recorded here.')
        : table(['Time', 'Agent', 'Tool', 'Decision', 'Outcome', 'Took', 'Session', 'Principal', 'Detail'], recs.map((x) => ({
          class: 'audit-row',
          onclick: (e) => toggle(e.currentTarget, x),
          cells: [
            h('span', { class: 'nowrap small' }, time(x.time)),
            x.agent,
            h('a', { href: `#/tools/${encodeURIComponent(x.tool)}`, class: 'mono small' }, x.tool),
            stateBadge(x.decision),
            [stateBadge(x.outcome), x.untrusted ? [' ', badge('untrusted', 'untrusted')] : null],
            { v: `${x.duration_ms < 10 ? x.duration_ms.toFixed(1) : Math.round(x.duration_ms)} ms`, class: 'num nowrap' },
            x.session_id ? h('a', { href: `#/sessions/${encodeURIComponent(x.session_id)}`, class: 'mono small', title: x.session_id }, x.session_id.slice(0, 8)) : '—',
            x.principal || '—',
            h('span', { class: 'small clip', title: x.detail || '' }, x.detail || ''),
          ],
        })), { label: 'Audit records' }));
    for (const tr of results.querySelectorAll('tr.audit-row')) {
      const x = recs[tr.rowIndex - 1];
      if (x && open.has(x.id)) toggle(tr, x, true);
    }
  };
  // A row opens into every field of its record, the full detail included.
  const toggle = (tr, x, keep = false) => {
    const next = tr.nextElementSibling;
    if (next?.classList.contains('audit-detail')) {
      if (!keep) { next.remove(); open.delete(x.id); }
      return;
    }
    open.add(x.id);
    const kv = (k, v) => [h('dt', null, k), h('dd', { class: k === 'detail' ? '' : 'mono small' }, v === '' || v == null ? '—' : String(v))];
    tr.after(h('tr', { class: 'audit-detail' }, h('td', { colspan: '9' },
      h('dl', { class: 'kv' }, Object.entries(x).map(([k, v]) => kv(k, v))))));
  };
  // Export every record the filters match, a page of 1000 at a time.
  const download = async (kind) => {
    const p = { ...params(), limit: 1000 };
    const all = [];
    for (let off = 0; ; off += 1000) {
      const r = await api.get(`/api/audit${qs({ ...p, offset: off || '' })}`);
      all.push(...(r.records || []));
      if (off + 1000 >= (r.total || 0) || !(r.records || []).length) break;
    }
    let body = JSON.stringify(all, null, 1);
    if (kind === 'csv') {
      const cols = ['id', 'time', 'agent', 'principal', 'session_id', 'tool', 'decision', 'outcome', 'duration_ms', 'untrusted', 'args_digest', 'detail'];
      const cell = (v) => (/[",\n]/.test(String(v ?? '')) ? `"${String(v).replaceAll('"', '""')}"` : String(v ?? ''));
      body = [cols.join(','), ...all.map((x) => cols.map((c) => cell(x[c])).join(','))].join('\n');
    }
    const a = h('a', { href: URL.createObjectURL(new Blob([body], { type: kind === 'csv' ? 'text/csv' : 'application/json' })), download: `agentd-audit.${kind}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  };
  exportJSON.addEventListener('click', () => download('json').catch((e) => ctx.toast(e.message, 'err')));
  exportCSV.addEventListener('click', () => download('csv').catch((e) => ctx.toast(e.message, 'err')));
  const show = () => {
    history.replaceState(null, '', `#/audit${qs(params())}`);
    shown = null;
    load();
  };
  // A changed filter starts again at the newest records.
  const apply = debounce(() => { offset = 0; show(); }, 250);
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  newer.addEventListener('click', () => { offset = Math.max(0, offset - Number(limit.value)); show(); });
  older.addEventListener('click', () => { offset += Number(limit.value); show(); });
  reset.addEventListener('click', () => {
    for (const el of [agent, session, tool, decision, outcome, since, until]) el.value = '';
    if (ctx.session.admin) principal.value = '';
    limit.value = '200';
    apply();
  });
  // New records show as they are written (a burst is one read, at most
  // every 2 s).
  ctx.live(['audit'], load, { gap: 2000 });
}
