// Tools and upstreams: every tool with its schema and origin, each MCP
// server's state, last error, reconnects and tools; add, disable or
// remove servers registered through the API; call a tool by hand through
// the pipeline (policy, timeout, truncation, audit) as the logged-in
// principal.

import { api, ApiError } from '../api.js';
import { h, replace, badge, stateBadge, empty, errorBox, table, field, showFieldErrors, clearFieldErrors, pretty, same, debounce, dataURL, confirmInPage, patch } from '../dom.js';
import { icon } from '../icons.js';
import { unwrap } from '../transcript.js';

function originBadge(sp) {
  const kind = { builtin: '', mcp: 'accent', a2a: 'info', editor: '' }[sp.origin] ?? '';
  return badge(sp.server && sp.server !== sp.origin ? `${sp.origin} · ${sp.server}` : sp.origin, kind);
}

// ---- servers ----

function serverActions(ctx, s, cfg, reload) {
  if (!ctx.session.admin) return null;
  if (cfg?.source !== 'api') return h('span', { class: 'small faint', title: 'Defined in config.toml: edit the file to change it' }, 'config file');
  const disabled = s.state === 'disabled';
  const toggle = h('button', { class: 'btn small', type: 'button', dataset: { action: disabled ? 'enable' : 'disable' } }, disabled ? 'Enable' : 'Disable');
  toggle.addEventListener('click', async () => {
    toggle.disabled = true;
    try {
      await api.patch(`/api/mcp/servers/${encodeURIComponent(s.name)}`, { enabled: disabled });
      ctx.toast(`${s.name} ${disabled ? 'enabled' : 'disabled'}.`, 'ok');
    } catch (e) {
      ctx.toast(e.message, 'err');
    }
    reload();
  });
  const remove = h('button', { class: 'btn small danger', type: 'button', dataset: { action: 'remove' } }, 'Remove');
  remove.addEventListener('click', async () => {
    if (!await confirmInPage(`Remove the MCP server ${s.name}? Its process stops and its tools leave every agent.`)) return;
    try {
      await api.del(`/api/mcp/servers/${encodeURIComponent(s.name)}`);
      ctx.toast(`${s.name} removed.`, 'ok');
    } catch (e) {
      ctx.toast(e.message, 'err');
    }
    reload();
  });
  return h('span', { class: 'row' }, toggle, remove);
}

function serversTable(ctx, data, reload) {
  const list = data.servers || [];
  const cfgs = new Map((data.configured || []).map((c) => [c.name, c]));
  if (list.length === 0) {
    return empty('No upstream MCP servers', 'Add one with the button above (stdio command, or an http/sse URL), or as [[mcp_servers]] in config.toml. Its tools join the registry as mcp_<server>_<tool>.');
  }
  return table(['Server', 'State', 'Tools', 'Reconnects', 'Last error', ''], list.map((s) => ({
    class: `server-row server-${s.name}`,
    cells: [
      [h('a', { href: `#/tools/server/${encodeURIComponent(s.name)}` }, h('strong', null, s.name)), ' ', h('span', { class: 'small faint' }, s.transport)],
      [stateBadge(s.state), s.authorize_url ? [' ', h('a', { href: s.authorize_url, target: '_blank', rel: 'noopener noreferrer', class: 'small' }, 'authorize')] : null],
      { v: String(s.tools_count), class: 'num' },
      { v: String(s.reconnects), class: 'num server-reconnects' },
      s.last_error ? h('span', { class: 'small server-error' }, s.last_error) : h('span', { class: 'faint' }, '—'),
      serverActions(ctx, s, cfgs.get(s.name), reload),
    ],
  })), { label: 'MCP servers' });
}

function addServerForm(ctx, done) {
  const name = h('input', { type: 'text', name: 'name', required: true, placeholder: 'github', autocomplete: 'off' });
  const type = h('select', { name: 'type' }, ['stdio', 'http', 'sse'].map((t) => h('option', { value: t }, t)));
  const command = h('input', { type: 'text', name: 'command', placeholder: 'npx', autocomplete: 'off' });
  const args = h('textarea', { name: 'args', rows: '3', class: 'code', placeholder: '-y\n@modelcontextprotocol/server-github' });
  const dir = h('input', { type: 'text', name: 'dir', autocomplete: 'off' });
  const url = h('input', { type: 'text', name: 'url', placeholder: 'https://your-server/mcp', autocomplete: 'off' });
  const env = h('input', { type: 'text', name: 'env', placeholder: 'GITHUB_PERSONAL_ACCESS_TOKEN', autocomplete: 'off' });
  const allowed = h('input', { type: 'text', name: 'allowed', placeholder: 'create_issue, search_*', autocomplete: 'off' });
  const timeout = h('input', { type: 'number', name: 'timeout', min: '0', placeholder: '30' });
  const priv = h('input', { type: 'checkbox', name: 'allow_private' });
  const headers = h('textarea', { name: 'headers', rows: '2', class: 'code', placeholder: 'Authorization: Bearer ${GITHUB_TOKEN}', spellcheck: 'false' });
  const auth = h('select', { name: 'auth' }, h('option', { value: 'headers' }, 'Static headers (or none)'), h('option', { value: 'oauth' }, 'OAuth 2.1 (MCP authorization)'));
  const clientID = h('input', { type: 'text', name: 'client_id', placeholder: 'registered dynamically if empty', autocomplete: 'off' });
  const secretEnv = h('input', { type: 'text', name: 'client_secret_env', placeholder: 'MCP_CLIENT_SECRET', autocomplete: 'off' });
  const scopes = h('input', { type: 'text', name: 'scopes', placeholder: 'what the server advertises', autocomplete: 'off' });
  const msg = h('div');
  const stdioOnly = [field('Command', command, { name: 'transport.command', help: 'Program to run, on PATH or a path.' }),
    field('Arguments', args, { name: 'transport.args', help: 'One per line.' }),
    field('Working directory', dir, { name: 'transport.dir' }),
    field('Environment variables', env, { name: 'env', help: 'Names passed through, comma separated; the rest of the environment is cleared.' })];
  const httpOnly = [field('URL', url, { name: 'transport.url', wide: true }),
    h('div', { class: 'field', dataset: { field: 'allow_private' } }, h('label', { class: 'check' }, priv, 'Allow loopback and private addresses'), h('div', { class: 'field-error', hidden: true })),
    field('Authorization', auth, { name: 'auth' })];
  const headerFields = [field('Headers', headers, { name: 'headers', wide: true, help: 'One "Name: value" a line. Put secrets in the environment and write ${NAME}: values are redacted in logs and the API.' })];
  const oauthFields = [field('Client id', clientID, { name: 'oauth.client_id' }), field('Client secret variable', secretEnv, { name: 'oauth.client_secret_env', help: 'The environment variable holding it; none for a public client.' }),
    field('Scopes', scopes, { name: 'oauth.scopes', help: 'Comma separated.' })];
  const sync = () => {
    const stdio = type.value === 'stdio';
    stdioOnly.forEach((f) => { f.hidden = !stdio; });
    httpOnly.forEach((f) => { f.hidden = stdio; });
    headerFields.forEach((f) => { f.hidden = stdio || auth.value !== 'headers'; });
    oauthFields.forEach((f) => { f.hidden = stdio || auth.value !== 'oauth'; });
  };
  type.addEventListener('change', sync);
  auth.addEventListener('change', sync);
  const submit = h('button', { class: 'btn primary', type: 'submit' }, 'Add and connect');
  const form = h('form', { class: 'card', id: 'add-server', novalidate: true, 'aria-labelledby': 'add-server-h' },
    h('header', null, h('h2', { id: 'add-server-h' }, 'Add an MCP server'), h('span', { class: 'spacer' }), h('span', { class: 'hint' }, 'kept in the store; survives restarts')),
    h('div', { class: 'form-grid' },
      field('Name', name, { name: 'name', help: 'Tools become mcp_<name>_<tool>.' }),
      field('Transport', type, { name: 'transport.type' }),
      field('Timeout (s)', timeout, { name: 'timeout_secs' }),
      ...stdioOnly, ...httpOnly, ...headerFields, ...oauthFields,
      field('Allowed tools', allowed, { name: 'allowed_tools', wide: true, help: 'Names or globs, comma separated. Empty allows all of them (logged as a warning).' })),
    msg,
    h('div', { class: 'actions' }, submit, h('button', { class: 'btn ghost', type: 'button', onclick: () => done(false) }, 'Cancel')));
  sync();
  const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    replace(msg);
    const cfg = { name: name.value.trim(), transport: { type: type.value } };
    if (type.value === 'stdio') {
      cfg.transport.command = command.value.trim();
      const a = args.value.split('\n').map((x) => x.trim()).filter(Boolean);
      if (a.length) cfg.transport.args = a;
      if (dir.value.trim()) cfg.transport.dir = dir.value.trim();
      if (list(env.value).length) cfg.env = list(env.value);
    } else {
      cfg.transport.url = url.value.trim();
      if (priv.checked) cfg.allow_private = true;
      if (auth.value === 'oauth') {
        cfg.oauth = {};
        if (clientID.value.trim()) cfg.oauth.client_id = clientID.value.trim();
        if (secretEnv.value.trim()) cfg.oauth.client_secret_env = secretEnv.value.trim();
        if (list(scopes.value).length) cfg.oauth.scopes = list(scopes.value);
      } else {
        const hs = {};
        const bad = [];
        headers.value.split('\n').forEach((line, i) => {
          if (!line.trim()) return;
          const at = line.indexOf(':');
          const k = at > 0 ? line.slice(0, at).trim() : '';
          if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(k)) bad.push(`line ${i + 1}: "${line.trim().slice(0, 40)}" is not "Name: value"`);
          else hs[k] = line.slice(at + 1).trim();
        });
        if (bad.length) { showFieldErrors(form, { fields: { headers: bad.join('; ') } }); return; }
        if (Object.keys(hs).length) cfg.headers = hs;
      }
    }
    if (allowed.value.trim()) cfg.allowed_tools = list(allowed.value);
    if (timeout.value) cfg.timeout_secs = Number(timeout.value);
    submit.disabled = true;
    try {
      await api.post('/api/mcp/servers', cfg);
      ctx.toast(`${cfg.name} added; connecting…`, 'ok');
      done(true);
    } catch (err) {
      if (!(err instanceof ApiError) || !showFieldErrors(form, err)) replace(msg, errorBox(err));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

async function serverDetail(ctx, name) {
  const box = h('section', { class: 'card', id: 'server-detail', 'aria-live': 'polite' });
  let last = null;
  const load = async () => {
    let d;
    try {
      d = await api.get('/api/mcp/servers');
    } catch (e) {
      replace(box, errorBox(e));
      return;
    }
    const s = (d.servers || []).find((x) => x.name === name);
    const cfg = (d.configured || []).find((x) => x.name === name);
    if (last && same(last, [s, cfg])) return;
    last = [s, cfg];
    if (!s) {
      patch(box, empty(`No MCP server named ${name}`, h('a', { href: '#/tools' }, 'Back to tools and servers')));
      return;
    }
    const t = cfg?.transport || {};
    patch(box,
      h('header', null, h('h2', null, s.name), stateBadge(s.state), h('span', { class: 'spacer' }), serverActions(ctx, s, cfg, () => { last = null; load(); })),
      h('dl', { class: 'kv' },
        h('dt', null, 'Transport'), h('dd', null, s.transport),
        t.command ? [h('dt', null, 'Command'), h('dd', { class: 'mono' }, [t.command, ...(t.args || [])].join(' '))] : null,
        t.url ? [h('dt', null, 'URL'), h('dd', { class: 'mono' }, t.url)] : null,
        h('dt', null, 'Defined in'), h('dd', null, cfg?.source === 'api' ? 'the API (stored)' : 'config.toml'),
        h('dt', null, 'Server'), h('dd', null, s.server_info ? `${s.server_info.title || s.server_info.name} ${s.server_info.version || ''}` : '—'),
        h('dt', null, 'Protocol'), h('dd', null, s.protocol_version || '—'),
        h('dt', null, 'Reconnects'), h('dd', { class: 'server-reconnects' }, String(s.reconnects)),
        h('dt', null, 'Last error'), h('dd', { class: 'server-error' }, s.last_error || '—'),
        s.sandbox ? [h('dt', null, 'Sandbox'), h('dd', { class: 'server-sandbox' },
          `${s.sandbox.confined ? 'confined' : 'NOT confined'}; network ${s.sandbox.network}; enforced: ${s.sandbox.enforced}`,
          s.sandbox.missing?.length ? h('div', { class: 'small server-error' }, `Not enforced here: ${s.sandbox.missing.join('; ')}`) : null)] : null,
        h('dt', null, 'Allowed tools'), h('dd', null, cfg?.allowed_tools ? (cfg.allowed_tools.length ? cfg.allowed_tools.join(', ') : 'none') : 'all'),
        s.collisions?.length ? [h('dt', null, 'Left out'), h('dd', null, `${s.collisions.join(', ')} (names taken)`)] : null),
      s.authorize_url ? h('p', { class: 'note-box' }, 'Waiting for you to authorize agentd: ', h('a', { href: s.authorize_url, target: '_blank', rel: 'noopener noreferrer' }, 'open the authorization page')) : null,
      h('h3', null, `Tools (${s.tools_count})`),
      s.tools.length === 0 ? h('p', { class: 'faint' }, s.state === 'connected' ? 'This server offers no tool that allowed_tools lets through.' : 'Tools show once it is connected.')
        : table(['Tool', 'Upstream name', 'Description'], s.tools.map((x) => [
          h('a', { href: `#/tools/${encodeURIComponent(x.name)}` }, h('span', { class: 'mono' }, x.name)), h('span', { class: 'mono small' }, x.upstream), h('span', { class: 'small' }, x.description)])));
  };
  ctx.live(['mcp'], load, { accept: (c) => c.id === name });
  return box;
}

// ---- tools ----

function schemaView(schema) {
  let s = schema;
  if (typeof s === 'string') { try { s = JSON.parse(s); } catch { s = {}; } }
  const props = Object.entries(s?.properties || {});
  const req = new Set(s?.required || []);
  return h('div', { class: 'schema' },
    props.length === 0 ? h('p', { class: 'faint' }, 'No arguments.')
      : table(['Argument', 'Type', 'Description'], props.map(([k, v]) => [
        [k, req.has(k) ? h('span', { class: 'badge warn', title: 'required' }, 'required') : null],
        h('span', { class: 'mono small' }, Array.isArray(v.type) ? v.type.join(' | ') : (v.type || (v.enum ? 'enum' : 'any'))),
        h('span', { class: 'small' }, v.description || '', v.enum ? ` (one of ${v.enum.join(', ')})` : ''),
      ])),
    h('details', null, h('summary', null, 'JSON Schema'), h('pre', null, pretty(s))));
}

function skeleton(schema) {
  let s = schema;
  if (typeof s === 'string') { try { s = JSON.parse(s); } catch { s = {}; } }
  const out = {};
  for (const k of s?.required || []) {
    const p = s.properties?.[k] || {};
    out[k] = p.default ?? ({ string: '', number: 0, integer: 0, boolean: false, array: [], object: {} }[p.type] ?? null);
  }
  return JSON.stringify(out, null, 2);
}

function parsedSchema(schema) {
  if (typeof schema !== 'string') return schema || {};
  try { return JSON.parse(schema); } catch { return {}; }
}

// The arguments a form can take field by field: top-level strings,
// numbers, integers, booleans and enums. The rest stays in the JSON.
function simpleProps(schema) {
  return Object.entries(schema.properties || {}).filter(([, v]) => v.enum || ['string', 'number', 'integer', 'boolean'].includes(v.type));
}

// Calls made by hand, per tab (sessionStorage: arguments may be private).
const HISTORY_KEY = 'agentd.toolcalls';
function history(name) {
  try { return (JSON.parse(sessionStorage.getItem(HISTORY_KEY) || '{}')[name]) || []; } catch { return []; }
}
function remember(name, entry) {
  let all = {};
  try { all = JSON.parse(sessionStorage.getItem(HISTORY_KEY) || '{}'); } catch { /* start again */ }
  all[name] = [entry, ...(all[name] || [])].slice(0, 10);
  sessionStorage.setItem(HISTORY_KEY, JSON.stringify(all));
}

/** curlFor is the same call from a shell, the key read from the environment. */
export function curlFor(name, body) {
  const q = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;
  return `curl -sS -X POST ${q(`${location.origin}/api/tools/${encodeURIComponent(name)}/call`)} \\\n  -H 'Content-Type: application/json' -H "Authorization: Bearer $AGENTD_API_KEY" \\\n  -d ${q(JSON.stringify(body))}`;
}

function toolDetail(ctx, sp) {
  const schema = parsedSchema(sp.input_schema);
  const required = new Set(schema.required || []);
  const args = h('textarea', { class: 'code', rows: '6', name: 'args', id: 'tool-args', spellcheck: 'false' }, skeleton(sp.input_schema));
  args.value = skeleton(sp.input_schema);
  const out = h('div', { id: 'tool-call-result', 'aria-live': 'polite' });
  const run = h('button', { class: 'btn primary', type: 'submit', id: 'tool-call' }, 'Call');
  const curlBtn = h('button', { class: 'btn', type: 'button', id: 'tool-curl-copy' }, 'Copy as curl');
  const curlBox = h('div', { id: 'tool-curl' });
  const histBox = h('div', { id: 'tool-history' });
  const mayCall = ctx.session.tools.some((g) => g === '*' || g === sp.name || (g.endsWith('*') && sp.name.startsWith(g.slice(0, -1))));

  // One input per simple argument, kept in step with the JSON both ways.
  const inputs = new Map();
  const current = () => { try { return JSON.parse(args.value || '{}'); } catch { return null; } };
  const fromJSON = () => {
    const v = current();
    if (!v) return;
    for (const [k, el] of inputs) {
      if (el.type === 'checkbox') el.checked = v[k] === true;
      else el.value = v[k] == null ? '' : String(v[k]);
    }
  };
  const fieldValue = (k, p, el) => {
    if (el.type === 'checkbox') return el.checked;
    if (el.value === '') return undefined;
    if (p.type === 'number' || p.type === 'integer') return Number(el.value);
    return el.value;
  };
  const toJSON = () => {
    const v = current() || {};
    for (const [k, p] of simpleProps(schema)) {
      const x = fieldValue(k, p, inputs.get(k));
      if (x === undefined) delete v[k]; else v[k] = x;
    }
    args.value = JSON.stringify(v, null, 2);
  };
  const fields = simpleProps(schema).map(([k, p]) => {
    let el;
    if (p.enum) el = h('select', { name: `arg-${k}` }, h('option', { value: '' }, '—'), p.enum.map((o) => h('option', { value: String(o) }, String(o))));
    else if (p.type === 'boolean') el = h('input', { type: 'checkbox', name: `arg-${k}` });
    else el = h('input', { type: 'text', name: `arg-${k}`, inputmode: p.type === 'string' ? null : 'decimal', placeholder: p.default != null ? String(p.default) : p.type });
    inputs.set(k, el);
    el.addEventListener('input', toJSON);
    el.addEventListener('change', toJSON);
    return field([k, required.has(k) ? ' *' : ''], el, { name: k, help: p.description });
  });
  args.addEventListener('input', fromJSON);
  fromJSON();

  // Every problem at once, each by its field, before anything is sent.
  const check = () => {
    try { JSON.parse(args.value || '{}'); } catch (err) { return { args: `not JSON: ${err.message}` }; }
    const v = current() || {};
    const bad = {};
    for (const [k, p] of simpleProps(schema)) {
      const el = inputs.get(k);
      if (required.has(k) && (v[k] === undefined || v[k] === '')) bad[k] = 'required';
      else if ((p.type === 'number' || p.type === 'integer') && el.value !== '' && (Number.isNaN(Number(el.value)) || (p.type === 'integer' && !Number.isInteger(Number(el.value))))) bad[k] = `"${el.value}" is not ${p.type === 'integer' ? 'a whole number' : 'a number'}`;
    }
    return Object.keys(bad).length ? bad : null;
  };
  const showHistory = () => {
    const list = history(sp.name);
    replace(histBox, list.length === 0 ? null : [
      h('h3', null, 'Recent calls'),
      h('ul', { class: 'call-history' }, list.map((c) => h('li', null,
        c.is_error ? badge('error', 'err') : badge('ok', 'ok'), ' ',
        h('button', { class: 'btn ghost small mono', type: 'button', title: 'Put these arguments back in the form', onclick: () => { args.value = JSON.stringify(c.args, null, 2); fromJSON(); } }, JSON.stringify(c.args).slice(0, 80)),
        ' ', h('span', { class: 'small faint' }, `${c.duration_ms} ms · ${new Date(c.at).toLocaleTimeString()}`)))),
    ]);
  };
  curlBtn.addEventListener('click', async () => {
    const bad = check();
    if (bad) { showFieldErrors(form, { fields: bad }); return; }
    const text = curlFor(sp.name, current());
    replace(curlBox, h('pre', { class: 'code curl' }, text));
    try { await navigator.clipboard.writeText(text); ctx.toast('Copied as curl; set AGENTD_API_KEY first.', 'ok'); } catch { /* shown below the form instead */ }
  });

  const form = h('form', { novalidate: true },
    fields.length ? h('div', { class: 'form-grid tool-fields' }, fields) : null,
    field(fields.length ? 'Arguments (JSON, kept in step with the fields)' : 'Arguments (JSON)', args, { name: 'args', wide: true, help: 'Runs through the full pipeline as you: policy, timeout, truncation, untrusted-data marking and the audit log.' }),
    h('div', { class: 'actions' }, run, curlBtn), curlBox, out, histBox);
  showHistory();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    const bad = check();
    if (bad) {
      showFieldErrors(form, { fields: bad });
      return;
    }
    const body = current();
    run.disabled = true;
    replace(out, h('p', { class: 'run-status' }, 'Calling…'));
    try {
      const r = await api.post(`/api/tools/${encodeURIComponent(sp.name)}/call`, body);
      remember(sp.name, { args: body, is_error: r.is_error, duration_ms: r.duration_ms, at: Date.now() });
      showHistory();
      const u = unwrap(r.content);
      replace(out,
        h('div', { class: 'row' }, r.is_error ? badge('error', 'err') : badge('ok', 'ok'), r.untrusted ? badge(`untrusted · ${u?.source || sp.origin}`, 'untrusted') : null, h('span', { class: 'small faint' }, `${r.duration_ms} ms`)),
        h('div', { class: ['tool-result', r.untrusted && 'untrusted', r.is_error && 'is-error'] }, h('pre', { class: 'tool-output' }, u ? u.text : r.content)),
        r.structured ? h('details', null, h('summary', null, 'Structured content'), h('pre', null, pretty(r.structured))) : null,
        (r.images || []).map((img) => h('img', { src: dataURL(img), alt: img.mime_type })));
    } catch (err) {
      replace(out, errorBox(err));
    } finally {
      run.disabled = false;
    }
  });
  return h('section', { class: 'card', id: 'tool-detail' },
    h('header', null, h('h2', { class: 'mono' }, sp.name), originBadge(sp), sp.untrusted || sp.origin === 'mcp' || sp.origin === 'a2a' ? badge('untrusted results', 'untrusted') : null, sp.read_only ? badge('read-only') : null),
    h('p', null, sp.description || h('span', { class: 'faint' }, 'No description.')),
    sp.server && sp.origin === 'mcp' ? h('p', { class: 'small' }, 'From the MCP server ', h('a', { href: `#/tools/server/${encodeURIComponent(sp.server)}` }, sp.server), '.') : null,
    h('h3', null, 'Arguments'), schemaView(sp.input_schema),
    h('h3', null, 'Call it by hand'),
    mayCall ? form : h('p', { class: 'faint' }, 'Your principal may not call this tool directly (its tools list).'));
}

export default async function tools(ctx) {
  const [first, second] = ctx.params;
  const serversBox = h('div', { id: 'servers' });
  const addBtn = h('button', { class: 'btn', type: 'button', id: 'add-server-open' }, icon('plus', 16), 'Add server');
  const addSlot = h('div');
  const search = h('input', { type: 'search', id: 'tool-search', placeholder: 'Filter tools…', 'aria-label': 'Filter tools', value: ctx.query.get('q') || '' });
  const origin = h('select', { id: 'tool-origin', 'aria-label': 'Origin' }, h('option', { value: '' }, 'Every origin'), ['builtin', 'mcp', 'a2a'].map((o) => h('option', { value: o }, o)));
  const toolsBox = h('div', { id: 'tool-list' });
  const side = h('div', { class: 'stack' });
  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Tools & servers'), h('span', { class: 'spacer' }), ctx.session.admin ? addBtn : null),
    addSlot,
    h('section', { class: 'card', 'aria-labelledby': 'servers-h' }, h('header', null, h('h2', { id: 'servers-h' }, 'MCP servers'), h('span', { class: 'spacer' }), h('span', { class: 'hint' }, 'live')), serversBox),
    h('div', { class: 'tools-grid', id: 'tools-grid' },
      h('section', { class: 'card', 'aria-labelledby': 'tools-h' },
        h('header', null, h('h2', { id: 'tools-h' }, 'Tools'), h('span', { class: 'spacer' }), search, origin),
        toolsBox),
      side));

  let lastServers = null;
  const loadServers = async () => {
    try {
      const d = await api.get('/api/mcp/servers');
      if (lastServers && same(lastServers, d)) return;
      lastServers = d;
      patch(serversBox, serversTable(ctx, d, () => { lastServers = null; servers.now(); }));
    } catch (e) {
      replace(serversBox, errorBox(e));
    }
  };
  addBtn.addEventListener('click', () => {
    if (addSlot.firstChild) { replace(addSlot); return; }
    replace(addSlot, addServerForm(ctx, (added) => { replace(addSlot); if (added) { lastServers = null; servers.now(); } }));
    addSlot.querySelector('input')?.focus();
  });

  let specs = [];
  const drawTools = () => {
    const q = search.value.trim().toLowerCase();
    const list = specs.filter((sp) => (!origin.value || sp.origin === origin.value) && (!q || sp.name.toLowerCase().includes(q) || (sp.description || '').toLowerCase().includes(q)));
    patch(toolsBox, list.length === 0
      ? empty(specs.length ? 'No tool matches' : 'No tools you may call', specs.length ? 'Clear the filter.' : 'Your principal\'s tools list allows none.')
      : table(['Tool', 'Origin'], list.map((sp) => ({
        class: sp.name === first ? 'selected' : '',
        onclick: () => ctx.go(`#/tools/${encodeURIComponent(sp.name)}`),
        cells: [[h('a', { href: `#/tools/${encodeURIComponent(sp.name)}`, class: 'mono' }, sp.name),
          h('div', { class: 'small muted clamp' }, sp.description || '')], originBadge(sp)],
      })), { label: 'Tools' }));
  };
  search.addEventListener('input', debounce(drawTools, 150));
  origin.addEventListener('change', drawTools);
  const loadTools = async () => {
    try {
      const d = await api.get('/api/tools');
      const next = (d.tools || []).sort((a, b) => a.name.localeCompare(b.name));
      if (same(next, specs)) return;
      specs = next;
      drawTools();
      if (first && first !== 'server' && !side.firstChild) {
        const sp = specs.find((x) => x.name === first);
        replace(side, sp ? toolDetail(ctx, sp) : empty(`No tool named ${first}`, 'It may belong to a server that is not connected.'));
      }
    } catch (e) {
      replace(toolsBox, errorBox(e));
    }
  };

  if (first === 'server' && second) {
    replace(side, await serverDetail(ctx, second));
  } else if (!first) {
    replace(side, empty('Pick a tool', 'Its schema shows here, and you can call it by hand.'));
  }
  const servers = ctx.live(['mcp'], loadServers);
  ctx.live(['tools'], loadTools);
}
