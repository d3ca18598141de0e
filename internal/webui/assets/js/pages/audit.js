// The audit log: one record per tool call, whatever its origin, with the
// policy's decision and the outcome. Filters live in the URL, so a
// filtered view can be bookmarked or linked to.

import { api, qs } from '../api.js';
import { h, replace, badge, stateBadge, empty, errorBox, table, field, time, debounce, same } from '../dom.js';

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
  const session = h('input', { type: 'search', name: 'session_id', value: q.get('session_id') || '', placeholder: 'session id', autocomplete: 'off' });
  const tool = h('input', { type: 'search', name: 'tool', value: q.get('tool') || '', placeholder: 'exact tool name', list: 'audit-tools', autocomplete: 'off' });
  const toolNames = h('datalist', { id: 'audit-tools' });
  const decision = h('select', { name: 'decision' }, h('option', { value: '' }, 'Any'), DECISIONS.map((d) => h('option', { value: d, selected: q.get('decision') === d }, d)));
  const outcome = h('select', { name: 'outcome' }, h('option', { value: '' }, 'Any'), OUTCOMES.map((d) => h('option', { value: d, selected: q.get('outcome') === d }, d)));
  const since = h('input', { type: 'datetime-local', name: 'since', value: toLocalInput(q.get('since')) });
  const until = h('input', { type: 'datetime-local', name: 'until', value: toLocalInput(q.get('until')) });
  const limit = h('select', { name: 'limit' }, ['50', '200', '1000'].map((n) => h('option', { value: n, selected: (q.get('limit') || '200') === n }, n)));
  const reset = h('button', { class: 'btn', type: 'button', id: 'audit-clear' }, 'Clear filters');
  const form = h('form', { class: 'filters card', id: 'audit-filters', 'aria-label': 'Filters' },
    field('Agent', agent, { name: 'agent' }), field('Session', session, { name: 'session_id' }), field('Tool', tool, { name: 'tool' }),
    field('Decision', decision, { name: 'decision' }), field('Outcome', outcome, { name: 'outcome' }),
    field('From', since, { name: 'since' }), field('Until', until, { name: 'until' }), field('Show', limit, { name: 'limit' }),
    h('div', { class: 'field' }, reset), toolNames);
  const results = h('section', { class: 'card', id: 'audit-results', 'aria-live': 'polite' });
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

  const params = () => {
    const iso = (el) => (el.value ? new Date(el.value).toISOString().replace(/\.\d{3}Z$/, 'Z') : '');
    return { agent: agent.value, session_id: session.value.trim(), tool: tool.value.trim(), decision: decision.value, outcome: outcome.value, since: iso(since), until: iso(until), limit: limit.value };
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
    if (shown && same(shown, recs)) return;
    shown = recs;
    const filtered = Object.entries(p).some(([k, v]) => v && k !== 'limit');
    replace(results,
      h('header', null, h('h2', null, `${recs.length}${recs.length === Number(p.limit) ? '+' : ''} record${recs.length === 1 ? '' : 's'}`), h('span', { class: 'spacer' }), h('span', { class: 'hint' }, 'newest first; refreshes every 5 seconds')),
      recs.length === 0
        ? empty(filtered ? 'No call matches these filters' : 'No tool calls yet', filtered ? 'Widen the time range or clear a filter.' : 'Every call an agent (or you, on the Tools page) makes is recorded here.')
        : table(['Time', 'Agent', 'Tool', 'Decision', 'Outcome', 'Took', 'Session', 'Principal', 'Detail'], recs.map((x) => ({
          class: 'audit-row',
          cells: [
            h('span', { class: 'nowrap small' }, time(x.Time)),
            x.Agent,
            h('a', { href: `#/tools/${encodeURIComponent(x.Tool)}`, class: 'mono small' }, x.Tool),
            stateBadge(x.Decision),
            [stateBadge(x.Outcome), x.Untrusted ? [' ', badge('untrusted', 'untrusted')] : null],
            { v: `${x.duration_ms < 10 ? x.duration_ms.toFixed(1) : Math.round(x.duration_ms)} ms`, class: 'num nowrap' },
            x.SessionID ? h('a', { href: `#/sessions/${encodeURIComponent(x.SessionID)}`, class: 'mono small', title: x.SessionID }, x.SessionID.slice(0, 8)) : '—',
            x.Principal || '—',
            h('span', { class: 'small' }, x.Detail || ''),
          ],
        })), { label: 'Audit records' }));
  };
  const apply = debounce(() => {
    history.replaceState(null, '', `#/audit${qs(params())}`);
    shown = null;
    load();
  }, 250);
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  reset.addEventListener('click', () => {
    for (const el of [agent, session, tool, decision, outcome, since, until]) el.value = '';
    limit.value = '200';
    apply();
  });
  ctx.every(5000, load);
}
