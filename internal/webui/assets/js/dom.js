// DOM helpers. Everything the dashboard shows is built with h(), which
// sets text as text nodes and attributes one by one: nothing from the
// API (agent output, tool results, names) is ever parsed as HTML.

/** h builds an element: h('a', {href: '#/x', onclick: f}, 'text', child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2).toLowerCase(), v);
      } else if (k === 'class') {
        el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
      } else if (k === 'dataset') {
        Object.assign(el.dataset, v);
      } else if (k === 'value') {
        el.value = v;
      } else if (k === 'checked' || k === 'selected' || k === 'disabled' || k === 'hidden' || k === 'open') {
        el[k] = !!v;
      } else if (v === true) {
        el.setAttribute(k, '');
      } else {
        el.setAttribute(k, String(v));
      }
    }
  }
  append(el, children);
  return el;
}

/** append adds children (nodes, strings, arrays, null) to el. */
export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c == null || c === false || c === '') continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** replace empties el and fills it with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** badge is a small status pill; kind: ok, warn, err, info, accent, untrusted. */
export function badge(text, kind = '', title = '') {
  return h('span', { class: ['badge', kind], title: title || null }, text);
}

/** stateBadge colours a state word (MCP server, A2A task, run). */
export function stateBadge(state) {
  const kind = {
    connected: 'ok', completed: 'ok', ok: 'ok', allow: 'ok', approved: 'ok', end_turn: 'ok', running: 'info', working: 'info',
    submitted: 'info', connecting: 'warn', 'input-required': 'warn', 'auth-required': 'warn', pending: 'warn',
    disabled: '', canceled: '', cancelled: '', failed: 'err', error: 'err', denied: 'err', deny: 'err',
    rejected: 'err', timeout: 'err',
  }[state] ?? '';
  return badge(state || 'unknown', kind);
}

/** empty is an empty state: what is missing and what to do next. */
export function empty(title, ...what) {
  return h('div', { class: 'empty' }, h('strong', null, title), ...what);
}

/** errorBox shows an error message. */
export function errorBox(err) {
  return h('div', { class: 'error-box', role: 'alert' }, String(err?.message ?? err));
}

/** spinner is a small busy indicator with an accessible label. */
export function spinner(label = 'Working') {
  return h('span', { class: 'spinner', role: 'img', 'aria-label': label });
}

/** table builds a data table; rows are arrays of cells, or {cells, onclick, class}. */
export function table(headers, rows, opts = {}) {
  const body = h('tbody');
  for (const r of rows) {
    const row = Array.isArray(r) ? { cells: r } : r;
    const tr = h('tr', { class: [row.onclick && 'clickable', row.class] });
    if (row.onclick) {
      tr.tabIndex = 0;
      tr.addEventListener('click', (e) => { if (!e.target.closest('a,button,input,select,textarea,summary')) row.onclick(e); });
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' && e.target === tr) row.onclick(e); });
    }
    for (const c of row.cells) {
      const cell = c && typeof c === 'object' && !(c instanceof Node) && !Array.isArray(c) ? c : { v: c };
      tr.append(h('td', { class: cell.class }, cell.v));
    }
    body.append(tr);
  }
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'data', 'aria-label': opts.label || null },
      h('thead', null, h('tr', null, headers.map((x) => h('th', { scope: 'col' }, x)))),
      body));
}

/** field wraps a form control with its label, help and error slot. */
export function field(label, control, opts = {}) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const err = h('div', { class: 'field-error', id: `${id}-err`, hidden: true });
  control.setAttribute('aria-describedby', `${id}-err`);
  const f = h('div', { class: ['field', opts.wide && 'wide'], dataset: { field: opts.name || '' } },
    h('label', { for: id }, label), control,
    opts.help ? h('div', { class: 'help' }, opts.help) : null, err);
  return f;
}

/** clearFieldErrors removes every field error shown in form. */
export function clearFieldErrors(form) {
  for (const f of form.querySelectorAll('.field.invalid')) {
    f.classList.remove('invalid');
    const err = f.querySelector('.field-error');
    err.hidden = true;
    err.textContent = '';
    f.querySelector('input,select,textarea')?.removeAttribute('aria-invalid');
  }
}

/**
 * showFieldErrors shows an API error next to the fields it names
 * (err.fields, else err.field) and focuses the first; it returns false
 * when no field of form matched, so the caller shows the message itself.
 */
export function showFieldErrors(form, err) {
  clearFieldErrors(form);
  const fields = err.fields && Object.keys(err.fields).length ? err.fields : (err.field ? { [err.field]: err.message } : {});
  let first = null;
  for (const [name, msg] of Object.entries(fields)) {
    for (const f of form.querySelectorAll('.field[data-field]')) {
      const d = f.dataset.field;
      if (!d || !(name === d || name.startsWith(`${d}.`) || name.startsWith(`${d}[`))) continue;
      f.classList.add('invalid');
      const e = f.querySelector('.field-error');
      e.hidden = false;
      e.textContent = e.textContent ? `${e.textContent} ${msg}` : msg;
      f.querySelector('input,select,textarea')?.setAttribute('aria-invalid', 'true');
      first = first || f;
    }
  }
  first?.querySelector('input,select,textarea')?.focus();
  return !!first;
}

/** setFieldError shows msg under the field named name (null clears all). */
export function setFieldError(form, name, msg) {
  if (name == null) { clearFieldErrors(form); return false; }
  return showFieldErrors(form, { field: name, message: msg });
}

/** time formats an ISO time as local date and time. */
export function time(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return String(ts);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

/** ago says how long ago ts was, in words. */
export function ago(ts) {
  if (!ts) return '';
  const s = Math.round((Date.now() - new Date(ts).getTime()) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** timeAgo is a <time> element showing ago(ts) with the full time as a tooltip. */
export function timeAgo(ts) {
  return h('time', { datetime: ts, title: time(ts), class: 'nowrap', dataset: { ago: '' } }, ago(ts));
}

/** duration formats seconds as "1 h 4 min", "3 min 2 s", "850 ms". */
export function duration(sec) {
  if (sec == null) return '';
  if (sec < 1) return `${Math.round(sec * 1000)} ms`;
  if (sec < 60) return `${Math.round(sec * 10) / 10} s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m} min ${Math.round(sec % 60)} s`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr} h ${m % 60} min`;
  return `${Math.floor(hr / 24)} d ${hr % 24} h`;
}

/** pretty formats JSON (a value or a JSON string) for a <pre>. */
export function pretty(v) {
  if (typeof v === 'string') {
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
  }
  return JSON.stringify(v, null, 2);
}

/** dataURL turns an API image ({mime_type, data: base64}) into a data: URL. */
export function dataURL(img) {
  return `data:${img.mime_type};base64,${img.data}`;
}

/** same reports whether two JSON-able values are equal (to skip redraws). */
export function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** debounce delays f until ms have passed without a call. */
export function debounce(f, ms) {
  let t;
  return (...args) => { clearTimeout(t); t = setTimeout(() => f(...args), ms); };
}

/**
 * confirmInPage asks a yes/no question in a modal <dialog> of the page
 * (not window.confirm, which blocks the tab, cannot be styled and which
 * browsers let the user suppress). Escape or "Keep" answers no. It
 * resolves true when the user confirms.
 */
export function confirmInPage(message, { yes = 'Confirm', no = 'Keep', danger = true } = {}) {
  return new Promise((resolve) => {
    const d = h('dialog', { class: 'confirm card', id: 'confirm-dialog', 'aria-labelledby': 'confirm-msg' },
      h('p', { id: 'confirm-msg' }, message),
      h('form', { method: 'dialog', class: 'actions' },
        h('button', { class: 'btn', value: 'no', dataset: { confirm: 'no' } }, no),
        h('button', { class: ['btn', danger ? 'danger' : 'primary'], value: 'yes', dataset: { confirm: 'yes' } }, yes)));
    d.addEventListener('close', () => { d.remove(); resolve(d.returnValue === 'yes'); });
    document.body.append(d);
    d.showModal();
    d.querySelector('[data-confirm="no"]').focus();
  });
}

// ---- redrawing without losing the user's place ----

/** pathTo is the child indexes from root down to el. */
function pathTo(root, el) {
  const path = [];
  for (let e = el; e && e !== root; e = e.parentElement) {
    if (!e.parentElement) return null;
    path.unshift([...e.parentElement.children].indexOf(e));
  }
  return path;
}

/** counterpart finds in to the element that stands where el stands in from. */
function counterpart(from, to, el) {
  if (el.id) {
    const byId = to.id === el.id ? to : to.querySelector(`#${CSS.escape(el.id)}`);
    if (byId) return byId;
  }
  const path = pathTo(from, el);
  if (!path) return null;
  let e = to;
  for (const i of path) {
    e = e?.children[i];
    if (!e) return null;
  }
  return e.tagName === el.tagName ? e : null;
}

/**
 * carry moves what the user did in from (an element about to be
 * replaced) to its replacement to: open <details>, typed input values,
 * scroll positions, and the focus with its selection.
 */
function carry(from, to) {
  for (const d of from.querySelectorAll('details')) {
    const n = counterpart(from, to, d);
    if (n) n.open = d.open;
  }
  for (const i of from.querySelectorAll('input, textarea, select')) {
    const n = counterpart(from, to, i);
    if (!n || n.tagName !== i.tagName) continue;
    if (i.type === 'checkbox' || i.type === 'radio') n.checked = i.checked;
    else if (i.value !== (i.defaultValue ?? i.value)) n.value = i.value;
  }
  for (const s of [from, ...from.querySelectorAll('*')]) {
    if (!s.scrollTop && !s.scrollLeft) continue;
    const n = s === from ? to : counterpart(from, to, s);
    if (n) { n.scrollTop = s.scrollTop; n.scrollLeft = s.scrollLeft; }
  }
}

function refocus(from, to, active) {
  if (!active || !from.contains(active)) return;
  const n = active === from ? to : counterpart(from, to, active);
  if (!n) return;
  n.focus({ preventScroll: true });
  if (typeof active.selectionStart === 'number' && typeof n.setSelectionRange === 'function') {
    try { n.setSelectionRange(active.selectionStart, active.selectionEnd, active.selectionDirection); } catch { /* not a text field */ }
  }
}

/**
 * patch replaces el's children by children (as replace does), keeping
 * the user's place: a child whose content did not change stays as it is
 * (focus, selection, scroll, open <details> untouched); one that changed
 * is replaced, with its open <details>, typed values, scroll positions
 * and focus carried over to its replacement. Children are matched by id,
 * else by position.
 */
export function patch(el, ...children) {
  const next = [...append(document.createDocumentFragment(), children).childNodes];
  const old = [...el.childNodes];
  const active = document.activeElement;
  const scrollY = window.scrollY;
  const used = new Set();
  const out = next.map((n, i) => {
    let o = n.id ? old.find((x) => x.id === n.id) : old[i];
    if (!o || used.has(o) || o.nodeName !== n.nodeName || (o.id || '') !== (n.id || '')) return n;
    used.add(o);
    if (o.nodeType !== Node.ELEMENT_NODE) return o.isEqualNode(n) ? o : n;
    // The ticking clocks moved on since o was drawn; n's are fresh.
    for (const t of o.querySelectorAll('time[data-ago]')) {
      const m = counterpart(o, n, t);
      if (m) m.textContent = t.textContent;
    }
    carry(o, n);
    if (o.isEqualNode(n)) return o;
    // Replaced in place, so that its neighbours never move.
    o.replaceWith(n);
    refocus(o, n, active);
    return n;
  });
  for (const o of old) if (!used.has(o)) o.remove();
  let prev = null;
  for (const n of out) {
    const want = prev ? prev.nextSibling : el.firstChild;
    if (n !== want) el.insertBefore(n, want);
    prev = n;
  }
  if (window.scrollY !== scrollY) window.scrollTo({ top: scrollY, behavior: 'instant' });
  return el;
}
