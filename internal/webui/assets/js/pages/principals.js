// Principals (admins only): who may call this daemon, with which rights,
// and the API keys minted for them. Principals are the config file's
// ([[principals]], api_key): changed there, not here. Keys are minted and
// revoked here; a minted key is shown once, in this page's memory only,
// and agentd keeps its hash.

import { api } from '../api.js';
import { h, replace, badge, empty, errorBox, table, field, time, showFieldErrors, clearFieldErrors, confirmInPage } from '../dom.js';

const list = (xs) => (xs && xs.length ? xs.join(', ') : '—');

/** copyText puts text on the clipboard: the async API where the page may
 * use it, else a selection and the copy command (older browsers, denied
 * permission). Resolves whether it worked. */
async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    input.select();
    try { return document.execCommand('copy'); } catch { return false; }
  }
}

export default async function principals(ctx) {
  const selected = ctx.params[0] || '';
  const listCard = h('section', { class: 'card', id: 'principals-list' });
  const detail = h('section', { class: 'card', id: 'principal-detail', hidden: !selected });
  // The minted key lives in this element only, until "Done" or leaving.
  const secret = h('div', { id: 'minted-secret', hidden: true });
  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Principals'),
      h('span', { class: 'sub' }, 'who may call this daemon; principals are defined in the config file, keys are minted here')),
    secret, listCard, detail);
  ctx.onLeave(() => replace(secret));

  if (!ctx.session.admin) {
    replace(listCard, errorBox('Principals and keys are for admins only.'));
    return;
  }

  const loadList = async () => {
    let r;
    try {
      r = await api.get('/api/principals');
    } catch (e) {
      replace(listCard, errorBox(e));
      return;
    }
    const ps = r.principals || [];
    replace(listCard,
      h('header', null, h('h2', null, `${ps.length} principal${ps.length === 1 ? '' : 's'}`), h('span', { class: 'spacer' }),
        h('span', { class: 'hint' }, 'add or change one in config.toml, then reload')),
      ps.length === 0 ? empty('No principals') : table(['Name', 'Role', 'Agents', 'Tools', 'Credential', 'Minted keys'], ps.map((p) => ({
        class: p.name === selected ? 'principal-row selected' : 'principal-row',
        onclick: () => ctx.go(`#/principals/${encodeURIComponent(p.name)}`),
        cells: [
          h('a', { href: `#/principals/${encodeURIComponent(p.name)}`, class: 'mono', dataset: { principal: p.name } }, p.name),
          p.admin ? badge('admin', 'accent') : badge('principal'),
          h('span', { class: 'small' }, list(p.agents)),
          h('span', { class: 'small' }, list(p.tools)),
          h('span', { class: 'mono small' }, p.credential),
          { v: p.mintable ? String(p.live_keys) : '—', class: 'num' },
        ],
      })), { label: 'Principals' }));
  };

  const showSecret = (name, m) => {
    const input = h('input', { type: 'text', readonly: true, value: m.key, id: 'minted-key', class: 'mono', 'aria-label': `the new key of ${name}`, spellcheck: 'false', autocomplete: 'off' });
    const copied = h('span', { class: 'small', id: 'minted-copied', role: 'status' });
    const copy = h('button', { class: 'btn primary', type: 'button', id: 'minted-copy' }, 'Copy');
    copy.addEventListener('click', async () => {
      copied.textContent = (await copyText(m.key, input)) ? 'Copied.' : 'Select the key and copy it by hand.';
    });
    const done = h('button', { class: 'btn', type: 'button', id: 'minted-done' }, 'Done: I have copied it');
    done.addEventListener('click', () => { replace(secret); secret.hidden = true; });
    replace(secret, h('div', { class: 'card secret-card', role: 'alert' },
      h('h2', null, `New key for ${name}`, ' ', h('span', { class: 'mono small' }, m.id)),
      h('p', { class: 'secret-warning' }, h('strong', null, 'Copy this key now: it is shown once. '),
        'agentd keeps only its hash, so nobody (you included) can see it again. If it is lost, revoke it and mint another.'),
      h('div', { class: 'row secret-row' }, input, copy),
      h('div', { class: 'actions' }, done, copied)));
    secret.hidden = false;
    input.focus();
    input.select();
  };

  const loadDetail = async () => {
    if (!selected) return;
    let p;
    try {
      p = await api.get(`/api/principals/${encodeURIComponent(selected)}`);
    } catch (e) {
      replace(detail, errorBox(e));
      return;
    }
    const rights = h('dl', { class: 'kv' },
      [['role', p.admin ? 'admin: every right' : 'principal'], ['agents', list(p.agents)], ['tools it may call', list(p.tools)],
        ['denied tools', list(p.deny_tools)], ['tools that ask first', list(p.ask_tools)], ['external A2A agents', list(p.a2a_agents)],
        ['defined by', p.source === 'config' ? 'a [[principals]] entry of the config' : p.source === 'api_key' ? 'the top-level api_key' : 'no credentials (loopback only)'],
        ['credential', p.credential]].map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
    let mint = null;
    if (p.mintable) {
      const label = h('input', { type: 'text', name: 'label', maxlength: '64', placeholder: 'what it is for: laptop, ci…', autocomplete: 'off' });
      const submit = h('button', { class: 'btn primary', type: 'submit', id: 'mint-key' }, 'Mint a key');
      mint = h('form', { class: 'form-grid', id: 'mint-form', 'aria-label': `Mint a key for ${p.name}` },
        field('Label', label, { name: 'label', help: 'Shown in the key list and the audit log; the key itself is shown once.' }),
        h('div', { class: 'field' }, h('label', { 'aria-hidden': 'true' }, ' '), submit));
      mint.addEventListener('submit', async (e) => {
        e.preventDefault();
        clearFieldErrors(mint);
        submit.disabled = true;
        try {
          const m = await api.post(`/api/principals/${encodeURIComponent(p.name)}/keys`, { label: label.value.trim() });
          label.value = '';
          showSecret(p.name, m);
          ctx.toast(`Minted ${m.id} for ${p.name}.`, 'ok');
          await Promise.all([loadList(), loadDetail()]);
        } catch (err) {
          if (!showFieldErrors(mint, err)) ctx.toast(err.message, 'err');
        } finally {
          submit.disabled = false;
        }
      });
    }
    const keys = p.keys || [];
    const revoke = async (k) => {
      if (!await confirmInPage(`Revoke the key ${k.id}${k.label ? ` (“${k.label}”)` : ''} of ${p.name}? Every client using it is refused from its next request.`, { yes: 'Revoke', no: 'Keep it' })) return;
      try {
        await api.del(`/api/principals/${encodeURIComponent(p.name)}/keys/${encodeURIComponent(k.id)}`);
        ctx.toast(`Revoked ${k.id}.`, 'ok');
      } catch (e) {
        ctx.toast(e.message, 'err');
      }
      await Promise.all([loadList(), loadDetail()]);
    };
    replace(detail,
      h('header', null, h('h2', null, p.name), p.admin ? badge('admin', 'accent') : null),
      rights,
      h('h3', null, 'Minted keys'),
      p.mintable ? null : h('p', { class: 'note-box' }, `${p.name} is the daemon's own principal: keys are minted for [[principals]] entries only (give one admin = true for another admin).`),
      mint,
      keys.length === 0
        ? (p.mintable ? empty('No minted keys', 'A key minted here acts as this principal on the API, the dashboard, MCP and A2A until it is revoked.') : null)
        : table(['Key', 'Label', 'Minted', 'State', ''], keys.map((k) => ({
          class: k.revoked_at ? 'key-row revoked' : 'key-row live',
          cells: [
            h('span', { class: 'mono small', dataset: { key: k.id } }, k.id),
            k.label || '—',
            h('span', { class: 'small nowrap' }, time(k.created_at), ` by ${k.created_by}`),
            k.revoked_at ? h('span', { class: 'small' }, badge('revoked', 'err'), ' ', time(k.revoked_at), ` by ${k.revoked_by}`) : badge('live', 'ok'),
            k.revoked_at ? '' : h('button', { class: 'btn small danger', type: 'button', dataset: { revoke: k.id }, onclick: () => revoke(k) }, 'Revoke'),
          ],
        })), { label: `Keys of ${p.name}` }));
    detail.hidden = false;
  };

  await Promise.all([loadList(), loadDetail()]);
}
