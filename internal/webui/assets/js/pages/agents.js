// Agents: the config file's agents (read-only here) and those created
// through the API, which an admin creates, edits and deletes. The API's
// validation errors show next to the fields they name.

import { api, ApiError } from '../api.js';
import { h, replace, badge, empty, errorBox, table, field, showFieldErrors, clearFieldErrors, same, confirmInPage, patch } from '../dom.js';
import { icon } from '../icons.js';

const list = (s) => s.split(/[\n,]/).map((x) => x.trim()).filter(Boolean);

function exposure(m) {
  return h('span', { class: 'row' }, badge('HTTP'), m.expose?.mcp ? badge('MCP', 'accent') : null, m.expose?.a2a ? badge('A2A', 'accent') : null);
}

function readOnly(e) {
  const m = e.manifest;
  const row = (k, v) => (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) ? null : [h('dt', null, k), h('dd', null, v)]);
  return [
    h('p', { class: 'note-box' }, 'Defined in config.toml (or the agents directory): edit the file and restart agentd to change it.'),
    h('dl', { class: 'kv' },
      row('Description', m.description),
      row('Kind', m.kind || 'llm'),
      row('Model', m.provider ? `${m.provider}/${m.model}` : ''),
      row('Tools', (m.tools || []).join(', ') || h('span', { class: 'faint' }, 'none')),
      row('MCP servers', (m.mcp_servers || []).join(', ')),
      row('Reasoning', m.reasoning),
      row('Temperature', m.temperature),
      row('Max tokens', m.max_tokens || ''),
      row('Max iterations', m.max_iterations || ''),
      row('Token budget', m.token_budget || ''),
      row('Images', m.images ? 'yes' : ''),
      row('Workspace', m.workspace),
      row('Served over', exposure(m)),
      row('Skills', (m.skills || []).map((s) => s.name).join(', '))),
    m.system_prompt ? [h('h3', null, 'System prompt'), h('pre', null, m.system_prompt)] : null,
  ];
}

function agentForm(ctx, entry, providers, done) {
  const m = entry?.manifest || { expose: {} };
  const isNew = !entry;
  const input = (name, value, attrs = {}) => h('input', { type: 'text', name, value: value ?? '', autocomplete: 'off', ...attrs });
  const name = input('name', m.name, { required: true, readonly: !isNew, placeholder: 'reviewer' });
  const description = input('description', m.description, { placeholder: 'What it is for, one line' });
  const kind = h('select', { name: 'kind' }, h('option', { value: 'llm', selected: !m.kind || m.kind === 'llm' }, 'llm (a model)'),
    h('option', { value: 'mcp_proxy', selected: m.kind === 'mcp_proxy' }, 'mcp_proxy (no model)'));
  const provider = input('provider', m.provider, { list: 'agent-providers', placeholder: providers[0] || 'openai' });
  const model = input('model', m.model, { placeholder: 'gpt-4.1-mini' });
  const system = h('textarea', { name: 'system_prompt', rows: '5' });
  system.value = m.system_prompt || '';
  const tools = h('textarea', { name: 'tools', rows: '2', class: 'code', placeholder: 'file_*\nmcp_github_*' });
  tools.value = (m.tools || []).join('\n');
  const servers = input('mcp_servers', (m.mcp_servers || []).join(', '), { placeholder: 'every server its tools match' });
  const temperature = h('input', { type: 'number', name: 'temperature', step: '0.1', value: m.temperature ?? '', placeholder: 'provider default' });
  const maxTokens = h('input', { type: 'number', name: 'max_tokens', value: m.max_tokens || '', placeholder: 'provider default' });
  const maxIter = h('input', { type: 'number', name: 'max_iterations', value: m.max_iterations || '', placeholder: '25' });
  const budget = h('input', { type: 'number', name: 'token_budget', value: m.token_budget || '', placeholder: 'unlimited' });
  const reasoning = h('select', { name: 'reasoning' }, ['', 'low', 'medium', 'high'].map((r) => h('option', { value: r, selected: (m.reasoning || '') === r }, r || 'provider default')));
  const workspace = input('workspace', m.workspace, { placeholder: 'the agent\'s name' });
  const images = h('input', { type: 'checkbox', name: 'images', checked: !!m.images });
  const mcp = h('input', { type: 'checkbox', name: 'expose_mcp', checked: !!m.expose?.mcp });
  const a2a = h('input', { type: 'checkbox', name: 'expose_a2a', checked: !!m.expose?.a2a });
  const msg = h('div');
  const save = h('button', { class: 'btn primary', type: 'submit', id: 'agent-save' }, isNew ? 'Create agent' : 'Save changes');
  const check = (label, el, name) => h('div', { class: 'field', dataset: { field: name } }, h('label', { class: 'check' }, el, label), h('div', { class: 'field-error', hidden: true }));
  const form = h('form', { id: 'agent-form', novalidate: true },
    h('div', { class: 'form-grid' },
      field('Name', name, { name: 'name', help: isNew ? 'Letters, digits, - and _. Used in URLs and tool names.' : 'The name cannot change.' }),
      field('Description', description, { name: 'description' }),
      field('Kind', kind, { name: 'kind' }),
      field('Provider', provider, { name: 'provider', help: 'A [providers.NAME] of config.toml.' }),
      field('Model', model, { name: 'model' }),
      field('Reasoning', reasoning, { name: 'reasoning' }),
      field('Temperature', temperature, { name: 'temperature', help: '0 to 2.' }),
      field('Max tokens', maxTokens, { name: 'max_tokens' }),
      field('Max iterations', maxIter, { name: 'max_iterations', help: 'Tool rounds per run.' }),
      field('Token budget', budget, { name: 'token_budget' }),
      field('Workspace', workspace, { name: 'workspace' }),
      field('MCP servers', servers, { name: 'mcp_servers', help: 'Comma separated; empty = all.' }),
      field('Tools', tools, { name: 'tools', wide: true, help: 'Patterns, one per line or comma separated: a tool is offered only if it matches one.' }),
      field('System prompt', system, { name: 'system_prompt', wide: true }),
      h('div', { class: 'row wide' }, check('Served as an MCP tool', mcp, 'expose'), check('Served over A2A', a2a, 'expose.a2a'), check('Its model takes images', images, 'images'))),
    h('datalist', { id: 'agent-providers' }, providers.map((p) => h('option', { value: p }))),
    msg,
    h('div', { class: 'actions' }, save, isNew ? h('a', { class: 'btn ghost', href: '#/agents' }, 'Cancel') : null));
  const num = (el) => (el.value === '' ? undefined : Number(el.value));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    replace(msg);
    // Start from the stored manifest so fields the form does not show
    // (skills) survive an edit.
    const out = { ...m, name: name.value.trim(), description: description.value.trim() || undefined, kind: kind.value === 'llm' ? undefined : kind.value,
      provider: provider.value.trim() || undefined, model: model.value.trim() || undefined, system_prompt: system.value || undefined,
      tools: list(tools.value), mcp_servers: list(servers.value), temperature: num(temperature), max_tokens: num(maxTokens),
      max_iterations: num(maxIter), token_budget: num(budget), reasoning: reasoning.value || undefined, workspace: workspace.value.trim() || undefined,
      images: images.checked || undefined, expose: { mcp: mcp.checked, a2a: a2a.checked } };
    for (const [k, v] of Object.entries(out)) if (v === undefined || (Array.isArray(v) && v.length === 0)) delete out[k];
    save.disabled = true;
    try {
      if (isNew) await api.post('/api/agents', out);
      else await api.put(`/api/agents/${encodeURIComponent(out.name)}`, out);
      ctx.toast(isNew ? `Agent ${out.name} created.` : `Agent ${out.name} saved.`, 'ok');
      done(out.name);
    } catch (err) {
      if (!(err instanceof ApiError) || !showFieldErrors(form, err)) replace(msg, errorBox(err));
    } finally {
      save.disabled = false;
    }
  });
  return form;
}

export default async function agents(ctx) {
  const selected = ctx.params[0] || '';
  const listBox = h('div', { id: 'agent-list' });
  const detail = h('section', { class: 'card', id: 'agent-detail' });
  const add = h('a', { class: 'btn', href: '#/agents/new', id: 'agent-new' }, icon('plus', 16), 'New agent');
  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Agents'), h('span', { class: 'sub' }, 'from config.toml, and created here'), h('span', { class: 'spacer' }), ctx.session.admin ? add : null),
    h('div', { class: 'split' }, h('section', { class: 'card', 'aria-label': 'Agents' }, listBox), detail));

  let entries = [];
  let shown = null;
  const loadList = async () => {
    try {
      entries = (await api.get('/api/agents')).agents || [];
    } catch (e) {
      replace(listBox, errorBox(e));
      return;
    }
    if (shown && same(shown, entries)) return;
    shown = entries;
    patch(listBox, entries.length === 0
      ? empty('No agents', ctx.session.admin ? 'Create one with “New agent”, or add [[agents]] to config.toml.' : 'Your principal may run none.')
      : table(['Agent', 'Source', 'Served over'], entries.map((e) => ({
        class: e.manifest.name === selected ? 'selected' : '',
        onclick: () => ctx.go(`#/agents/${encodeURIComponent(e.manifest.name)}`),
        cells: [[h('a', { href: `#/agents/${encodeURIComponent(e.manifest.name)}`, dataset: { agent: e.manifest.name } }, h('strong', null, e.manifest.name)),
          h('div', { class: 'small muted clamp' }, e.manifest.description || '')],
        badge(e.source, e.source === 'api' ? 'info' : ''), exposure(e.manifest)],
      })), { label: 'Agents' }));
  };
  await loadList();
  ctx.live(['agents'], loadList, { now: false });

  const providers = [...new Set(entries.map((e) => e.manifest.provider).filter(Boolean))];
  if (selected === 'new') {
    if (!ctx.session.admin) {
      replace(detail, empty('Only an admin creates agents', 'Ask an admin, or use an admin key.'));
    } else {
      replace(detail, h('header', null, h('h2', null, 'New agent')), agentForm(ctx, null, providers, (n) => ctx.go(`#/agents/${encodeURIComponent(n)}`)));
    }
  } else if (selected) {
    const e = entries.find((x) => x.manifest.name === selected);
    if (!e) {
      replace(detail, empty(`No agent named ${selected}`, h('a', { href: '#/agents' }, 'Back to the list')));
    } else {
      const del = h('button', { class: 'btn danger', type: 'button', id: 'agent-delete' }, 'Delete');
      del.addEventListener('click', async () => {
        if (!await confirmInPage(`Delete the agent ${selected}? Its sessions stay, but nobody can run it any more.`)) return;
        try {
          await api.del(`/api/agents/${encodeURIComponent(selected)}`);
          ctx.toast(`Agent ${selected} deleted.`, 'ok');
          ctx.go('#/agents');
        } catch (err) {
          ctx.toast(err.message, 'err');
        }
      });
      const editable = e.source === 'api' && ctx.session.admin;
      replace(detail,
        h('header', null, h('h2', null, selected), badge(e.source, e.source === 'api' ? 'info' : ''), h('span', { class: 'spacer' }),
          e.manifest.kind !== 'mcp_proxy' ? h('a', { class: 'btn', href: `#/chat/${encodeURIComponent(selected)}` }, 'Chat') : null, editable ? del : null),
        editable ? agentForm(ctx, e, providers, () => { shown = null; loadList(); }) : readOnly(e));
    }
  } else {
    replace(detail, empty('Pick an agent', ctx.session.admin ? 'Config agents are shown read-only; agents created here can be edited and deleted.' : 'Its configuration shows here.'));
  }
}
