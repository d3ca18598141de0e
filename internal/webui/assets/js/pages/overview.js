// Overview: health, agents, upstream MCP servers, external A2A agents,
// runs and recent problems. Each part is read once, then again only when
// the change stream says it changed; a redraw replaces only the cards
// whose content changed.

import { api } from '../api.js';
import { h, badge, stateBadge, empty, table, timeAgo, duration, errorBox, patch } from '../dom.js';
import { hello, onStatus } from '../live.js';
import { uptimeSeconds } from '../app.js';

const opt = (p) => p.catch((e) => ({ error: e }));

// The parts of the page: how each is read, and which notices of the
// change stream make it read again.
const PARTS = {
  agents: { topics: ['agents'], load: () => opt(api.get('/api/agents')) },
  mcp: { topics: ['mcp'], load: () => opt(api.get('/api/mcp/servers')) },
  // External agents are discovered at start; asked again only while one
  // is not (below).
  a2a: { topics: [], load: () => opt(api.get('/api/a2a/agents')) },
  runs: { topics: ['runs'], load: () => opt(api.get('/api/runs')) },
  // Each kind of failing call is asked for on its own, so that one kind
  // (or many ok calls) never pushes another out of the window; an ok
  // call changes none of them.
  audit: {
    topics: ['audit'], accept: (c) => c.what !== 'ok',
    load: () => Promise.all(PROBLEM_OUTCOMES.map((o) => opt(api.get(`/api/audit?outcome=${o}&limit=200`)))),
  },
  approvals: { topics: ['approvals'], load: () => opt(api.get('/api/approvals')) },
};

function stat(label, value, detail, id) {
  return h('div', { class: 'card stat', id }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value), h('div', { class: 'detail' }, detail));
}

function card(title, hint, body, id) {
  return h('section', { class: 'card', id, 'aria-labelledby': `${id}-h` },
    h('header', null, h('h2', { id: `${id}-h` }, title), h('span', { class: 'spacer' }), hint ? h('span', { class: 'hint' }, hint) : null),
    body);
}

function agentsCard(d) {
  if (d.agents.error) return card('Agents', '', errorBox(d.agents.error), 'ov-agents');
  const list = d.agents.agents || [];
  const body = list.length === 0
    ? empty('No agents yet', 'Add an [[agents]] table to config.toml, or create one on the ', h('a', { href: '#/agents/new' }, 'Agents page'), '.')
    : table(['Agent', 'Model', 'Served over', ''], list.map((e) => {
      const m = e.manifest;
      return [
        [h('a', { href: `#/agents/${encodeURIComponent(m.name)}` }, h('strong', null, m.name)), m.description ? h('div', { class: 'small muted' }, m.description) : null],
        m.kind === 'mcp_proxy' ? badge('mcp proxy', 'info') : h('span', { class: 'mono small' }, `${m.provider}/${m.model}`),
        h('span', { class: 'row' }, badge('HTTP'), m.expose?.mcp ? badge('MCP', 'accent') : null, m.expose?.a2a ? badge('A2A', 'accent') : null),
        m.kind === 'mcp_proxy' ? '' : h('a', { class: 'btn small', href: `#/chat/${encodeURIComponent(m.name)}` }, 'Chat'),
      ];
    }), { label: 'Agents' });
  return card('Agents', `${list.length} agent${list.length === 1 ? '' : 's'}`, body, 'ov-agents');
}

function serversCard(d) {
  if (d.mcp.error) return card('MCP servers', '', errorBox(d.mcp.error), 'ov-mcp');
  const list = d.mcp.servers || [];
  const body = list.length === 0
    ? empty('No upstream MCP servers', 'Add one on the ', h('a', { href: '#/tools' }, 'Tools & servers'), ' page or as [[mcp_servers]] in config.toml; its tools then reach agents whose tools patterns match.')
    : table(['Server', 'State', 'Tools', 'Reconnects', 'Last error'], list.map((s) => ({
      cells: [
        [h('a', { href: `#/tools/server/${encodeURIComponent(s.name)}` }, h('strong', null, s.name)), ' ', h('span', { class: 'faint small' }, s.transport)],
        stateBadge(s.state),
        { v: String(s.tools_count), class: 'num' },
        { v: String(s.reconnects), class: 'num' },
        s.last_error ? h('span', { class: 'small', title: s.last_error }, short(plainError(s.last_error), 90))
          : s.last_down_at ? h('span', { class: 'small muted', title: s.last_down_error || '' }, 'down ', timeAgo(s.last_down_at), ': ', short(plainError(s.last_down_error), 70))
            : h('span', { class: 'faint' }, '—'),
      ],
      class: `server-row server-${s.name}`,
    })), { label: 'MCP servers' });
  const up = list.filter((s) => s.state === 'connected').length;
  return card('MCP servers', `${up} of ${list.length} connected`, body, 'ov-mcp');
}

function a2aCard(d) {
  if (d.a2a.error) {
    const off = d.a2a.error.status === 404;
    return card('External A2A agents', '', off
      ? empty('A2A is off', 'Set enabled = true in the [a2a] table of config.toml to serve Agent Cards and reach external agents.')
      : errorBox(d.a2a.error), 'ov-a2a');
  }
  const list = d.a2a.agents || [];
  const body = list.length === 0
    ? empty('No external A2A agents', 'List remote agents as [[a2a.external_agents]] in config.toml; agents reach them as a2a_* tools.')
    : table(['Agent', 'URL', 'State', 'Checked'], list.map((a) => [
      h('strong', null, a.name), h('span', { class: 'mono small' }, a.url),
      a.discovered ? badge('discovered', 'ok') : (a.error ? badge('unreachable', 'err', a.error) : badge('discovering', 'warn')),
      a.checked_at ? timeAgo(a.checked_at) : '',
    ]), { label: 'External A2A agents' });
  return card('External A2A agents', `${list.filter((a) => a.discovered).length} of ${list.length} reachable`, body, 'ov-a2a');
}

const STOP_WORDS = { end_turn: ['done', 'ok'], cancelled: ['cancelled', ''], max_tokens: ['hit max tokens', 'warn'], max_iterations: ['hit max iterations', 'warn'], token_budget: ['over budget', 'warn'], refusal: ['refused', 'warn'] };

function runState(r) {
  if (r.running) return stateBadge('running');
  if (r.error) return badge('error', 'err', r.error);
  const [word, kind] = STOP_WORDS[r.stop_reason] || [r.stop_reason || 'done', ''];
  return badge(word, kind);
}

function tokens(r) {
  const n = (r.input_tokens || 0) + (r.output_tokens || 0);
  return n ? h('span', { title: `${(r.input_tokens || 0).toLocaleString()} in, ${(r.output_tokens || 0).toLocaleString()} out` }, n.toLocaleString()) : h('span', { class: 'faint' }, '—');
}

/** usageCard sums the recent runs' tokens by agent and by principal. */
function usageCard(d) {
  const runs = d.runs.runs || [];
  const sum = (key) => {
    const m = new Map();
    for (const r of runs) {
      const k = r[key] || '—';
      const u = m.get(k) || { runs: 0, input: 0, output: 0 };
      u.runs++; u.input += r.input_tokens || 0; u.output += r.output_tokens || 0;
      m.set(k, u);
    }
    return [...m.entries()].sort((a, b) => (b[1].input + b[1].output) - (a[1].input + a[1].output));
  };
  const rows = (key, label) => sum(key).map(([k, u]) => ({
    cells: [h('span', null, h('span', { class: 'faint small' }, `${label} `), k), { v: String(u.runs), class: 'num' },
      { v: u.input.toLocaleString(), class: 'num' }, { v: u.output.toLocaleString(), class: 'num' }],
    class: `usage-${key}`,
  }));
  const body = runs.length === 0 ? empty('No runs yet', 'Token use shows here once agents run.')
    : table(['By', 'Runs', 'Input tokens', 'Output tokens'], [...rows('agent', 'agent'), ...rows('principal', 'principal')], { label: 'Token usage' });
  return card('Token usage', `the last ${runs.length} run${runs.length === 1 ? '' : 's'}`, body, 'ov-usage');
}

function runsCard(d) {
  if (d.runs.error) return card('Recent runs', '', errorBox(d.runs.error), 'ov-runs');
  const list = (d.runs.runs || []).slice(0, 12);
  const body = list.length === 0
    ? empty('No runs since agentd started', 'Start one on the ', h('a', { href: '#/chat' }, 'Chat'), ' page, or from any MCP, A2A or ACP client.')
    : table(['Agent', 'From', 'Started', 'Took', 'Tokens', 'Result'], list.map((r) => ({
      cells: [
        r.session_id ? h('a', { href: `#/sessions/${encodeURIComponent(r.session_id)}` }, r.agent) : r.agent,
        h('span', { class: 'small' }, r.origin || '—', r.principal ? h('span', { class: 'faint' }, ` · ${r.principal}`) : ''),
        timeAgo(r.started),
        r.ended ? duration((new Date(r.ended) - new Date(r.started)) / 1000) : '…',
        { v: tokens(r), class: 'num nowrap small' },
        runState(r),
      ],
    })), { label: 'Recent runs' });
  const running = (d.runs.runs || []).filter((r) => r.running).length;
  return card('Recent runs', running ? `${running} running` : 'since agentd started', body, 'ov-runs');
}

const PROBLEM_OUTCOMES = ['error', 'denied', 'timeout'];

// A restart this recent is a problem even though the server is back.
const RESTART_WINDOW_MS = 15 * 60 * 1000;

/** plainError strips the <untrusted-data …> envelope the runner puts
 *  around what an MCP server said: the card says it is untrusted. */
export function plainError(text) {
  return String(text || '').replace(/<untrusted-data[^>]*>\n?/g, '').replace(/\n?<\/untrusted-data\u200b?>/g, '').trim();
}

function short(text, n = 160) {
  return text.length > n ? `${text.slice(0, n)}…` : text;
}

/** problems groups what went wrong: upstream servers first (their state,
 *  not the audit window), then failing runs and calls, repeats counted. */
export function problems(d, now = Date.now()) {
  const out = [];
  for (const s of d.mcp.servers || []) {
    const link = `#/tools/server/${encodeURIComponent(s.name)}`;
    if (s.state === 'failed' || (s.state === 'connecting' && s.last_error)) {
      out.push({ key: `mcp:${s.name}`, kind: 'err', at: s.last_down_at || '', what: `MCP server ${s.name} is ${s.state === 'failed' ? 'down' : 'reconnecting'}`,
        detail: plainError(s.last_error || s.last_down_error), count: 1, link, server: s.name });
    } else if (s.state === 'connected' && s.last_down_at && now - new Date(s.last_down_at) < RESTART_WINDOW_MS) {
      out.push({ key: `mcp:${s.name}`, kind: 'warn', at: s.last_down_at, what: `MCP server ${s.name} restarted`,
        // "back … ago" is a clock of the page (it moves on by itself).
        detail: plainError(s.last_down_error), back: s.connected_since, reconnects: s.reconnects, count: 1, link, server: s.name });
    }
  }
  const groups = new Map();
  const add = (key, p) => {
    const g = groups.get(key);
    if (!g) { groups.set(key, { ...p, count: 1 }); return; }
    g.count++;
    if (String(p.at) > String(g.at)) Object.assign(g, { at: p.at, detail: p.detail });
  };
  for (const r of d.runs.runs || []) {
    if (r.error) add(`run:${r.agent}:${r.error}`, { kind: 'err', at: r.ended || r.started, what: `run of ${r.agent} failed`, detail: r.error, link: r.session_id ? `#/sessions/${encodeURIComponent(r.session_id)}` : '' });
  }
  for (const page of d.audit || []) {
    for (const a of page.records || []) {
      // Grouped by tool and outcome: the detail of the newest stands for all.
      add(`audit:${a.tool}:${a.outcome}`, { kind: a.outcome === 'denied' ? 'warn' : 'err', at: a.time, what: `${a.tool} ${a.outcome === 'error' ? 'failed' : a.outcome}`,
        detail: plainError(a.detail), link: `#/audit?tool=${encodeURIComponent(a.tool)}&outcome=${a.outcome}` });
    }
  }
  const rest = [...groups.values()].sort((x, y) => String(y.at).localeCompare(String(x.at)));
  return [...out, ...rest].slice(0, 8);
}

function problemsCard(d) {
  const list = problems(d);
  const failing = (d.audit || []).reduce((n, p) => n + (p.total || 0), 0);
  const body = list.length === 0
    ? empty('Nothing went wrong', 'Failed runs, refused or failing tool calls and unreachable or restarted servers show up here.')
    : h('ul', { class: 'problems' }, list.map((p) => h('li', { class: `problem ${p.kind}`, dataset: p.server ? { server: p.server } : {} },
      h('span', { class: `dot ${p.kind}` }),
      h('div', { class: 'problem-main' },
        h('div', null, p.link ? h('a', { href: p.link }, h('strong', null, p.what)) : h('strong', null, p.what),
          p.count > 1 ? h('span', { class: 'badge problem-count', title: 'times in the window' }, `×${p.count}`) : null),
        p.detail || p.back ? h('div', { class: 'small muted problem-detail', title: p.detail }, short(p.detail),
          p.back ? [' · back ', timeAgo(p.back), `, ${p.reconnects} reconnect${p.reconnects === 1 ? '' : 's'} so far`] : null) : null),
      h('span', { class: 'small faint problem-when' }, p.at ? timeAgo(p.at) : 'now'))));
  return card('Recent problems', failing ? `${failing} failing or refused call${failing === 1 ? '' : 's'} in the audit log` : '', body, 'ov-problems');
}

function render(d) {
  const servers = d.mcp.servers || [];
  const up = servers.filter((s) => s.state === 'connected').length;
  const runs = d.runs.runs || [];
  const pending = (d.approvals.approvals || []).length;
  return [
    problemsCard(d),
    h('div', { class: 'grid stats' },
      stat('Status', [h('span', { class: 'dot ok' }), d.health.status], `version ${d.health.version}`, 'stat-status'),
      stat('Uptime', h('span', { dataset: { uptime: '' } }, duration(d.health.uptime_seconds)), 'since the daemon started', 'stat-uptime'),
      stat('Agents', String((d.agents.agents || []).length), 'config and API', 'stat-agents'),
      stat('MCP servers', `${up}/${servers.length}`, 'connected', 'stat-mcp'),
      stat('Runs', String(runs.filter((r) => r.running).length), `running · ${runs.filter((r) => r.error).length} failed recently`, 'stat-runs'),
      stat('Approvals', pending ? h('a', { href: '#/approvals' }, String(pending)) : '0', pending ? 'waiting for you' : 'none waiting', 'stat-approvals')),
    h('div', { class: 'grid two' }, agentsCard(d), serversCard(d), runsCard(d), a2aCard(d), usageCard(d)),
  ];
}

export default async function overview(ctx) {
  const body = h('div', { id: 'overview-body' });
  patch(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Overview'), h('span', { class: 'sub' }, 'live: updates as things change')),
    body);
  const d = {};
  const draw = () => {
    if (Object.keys(PARTS).some((k) => !(k in d))) return; // the first reads are not all in
    const hl = hello();
    // The health is the change stream's; its uptime moves on locally.
    const health = hl ? { status: hl.status, version: hl.version, uptime_seconds: uptimeSeconds() } : { status: 'ok', version: '', uptime_seconds: 0 };
    const [problemsEl, stats, grid] = render({ ...d, health });
    if (!body.firstChild) {
      patch(body, problemsEl, stats, grid);
      return;
    }
    // Card by card, so a card that did not change keeps its focus,
    // scroll and open details.
    patch(body.children[0], ...problemsEl.childNodes);
    patch(body.children[1], ...stats.childNodes);
    patch(body.children[2], ...grid.childNodes);
  };
  for (const [name, part] of Object.entries(PARTS)) {
    ctx.live(part.topics, async () => {
      d[name] = await part.load();
      draw();
    }, { accept: part.accept });
  }
  // A new hello (a reconnect) brings the health.
  ctx.onLeave(onStatus(() => draw()));
  // A remote A2A agent still being discovered (or unreachable) is asked
  // about again every 30 s; once all are reachable, never.
  ctx.every(30_000, async () => {
    const list = d.a2a?.agents || [];
    if (!list.some((a) => !a.discovered)) return;
    d.a2a = await PARTS.a2a.load();
    draw();
  });
}
