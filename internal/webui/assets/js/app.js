// The dashboard's shell: session, navigation, routing, theme, keyboard.
// Pages are ES modules under pages/, loaded on first visit; each exports
// a default render(ctx) that fills ctx.main and says through ctx.live
// which notices of the change stream (live.js) make it read its data
// again; that stops when the user leaves the page. Nothing polls: an
// idle tab makes no request but its one stream.

import { api, setCSRF, setUnauthorizedHandler } from './api.js';
import { h, replace, duration, ago, errorBox } from './dom.js';
import { icon } from './icons.js';
import { connect, disconnect, onStatus, refresher } from './live.js';

export const PAGES = [
  { id: 'overview', label: 'Overview', icon: 'overview', key: 'o' },
  { id: 'chat', label: 'Chat', icon: 'chat', key: 'c' },
  { id: 'sessions', label: 'Sessions', icon: 'sessions', key: 's' },
  { id: 'approvals', label: 'Approvals', icon: 'approvals', key: 'p' },
  { id: 'tools', label: 'Tools & servers', icon: 'tools', key: 't' },
  { id: 'audit', label: 'Audit log', icon: 'audit', key: 'l' },
  { id: 'a2a', label: 'A2A tasks', icon: 'a2a', key: 'k' },
  { id: 'agents', label: 'Agents', icon: 'agents', key: 'a' },
  { id: 'principals', label: 'Principals', icon: 'key', key: 'i', admin: true },
];

const app = document.getElementById('app');
const toasts = document.getElementById('toasts');
let session = null;
let current = null; // {stop()} of the page on screen
let shell = null;

/** toast shows a short message at the bottom right for a few seconds. */
export function toast(message, kind = '') {
  const t = h('div', { class: ['toast', kind] }, message);
  toasts.append(t);
  setTimeout(() => t.remove(), kind === 'err' ? 8000 : 4000);
}

// ---- theme ----
function theme() {
  return document.documentElement.dataset.theme ||
    (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
}
function applyTheme(t) {
  document.documentElement.dataset.theme = t;
  try { localStorage.setItem('agentd-theme', t); } catch { /* private mode */ }
  const b = document.getElementById('theme-toggle');
  if (b) {
    const next = t === 'dark' ? 'light' : 'dark';
    b.setAttribute('aria-label', `Switch to ${next} theme`);
    b.title = `Switch to ${next} theme`;
    replace(b, icon(t === 'dark' ? 'sun' : 'moon'));
  }
}
try {
  const saved = localStorage.getItem('agentd-theme'); // a preference, not a secret
  if (saved === 'dark' || saved === 'light') document.documentElement.dataset.theme = saved;
} catch { /* private mode */ }

// ---- login ----
async function showLogin(reason) {
  stopPage();
  stopShell();
  disconnect();
  shell = null;
  const mod = await import('./pages/login.js');
  app.removeAttribute('aria-busy');
  app.className = '';
  mod.default(app, reason, async (info) => {
    session = info;
    setCSRF(info.csrf_token);
    start();
  });
}

setUnauthorizedHandler(() => {
  if (session) {
    session = null;
    showLogin('Your session ended. Log in again.');
  }
});

// ---- shell ----
function buildShell() {
  // Admin pages are not offered to principals that would get a 403.
  const nav = h('ul', null, PAGES.filter((p) => !p.admin || session.admin).map((p) => h('li', null,
    h('a', { href: `#/${p.id}`, id: `nav-${p.id}`, dataset: { page: p.id }, title: p.label },
      h('span', { class: 'ico', 'aria-hidden': 'true' }, icon(p.icon)), h('span', { class: 'nav-label' }, p.label),
      p.id === 'approvals' ? h('span', { class: 'count', id: 'approvals-count', hidden: true, 'aria-label': 'pending approvals' }) : null))));
  const health = h('span', { class: 'health', id: 'health' }, h('span', { class: 'dot' }), h('span', { class: 'label' }, 'connecting…'));
  const liveState = h('span', { class: 'live-state', id: 'live-state', role: 'status', dataset: { state: 'connecting' } }, 'connecting');
  const logout = h('button', { class: 'btn ghost icon-btn', type: 'button', title: 'Log out', 'aria-label': 'Log out', onclick: logoutNow }, icon('logout'));
  const themeBtn = h('button', { class: 'btn ghost icon-btn', type: 'button', id: 'theme-toggle', onclick: () => applyTheme(theme() === 'dark' ? 'light' : 'dark') });
  const main = h('main', { id: 'main', tabindex: '-1' });
  const el = h('div', { class: 'shell' },
    h('header', { class: 'topbar' },
      h('a', { class: 'brand', href: '#/overview' }, h('img', { src: '/ui/icon.svg', alt: '' }), 'agentd'),
      health,
      liveState,
      h('span', { class: 'spacer' }),
      h('span', { class: 'whoami', title: session.admin ? 'admin: sees and changes everything' : 'sees its own sessions and runs' },
        'Signed in as ', h('strong', null, session.principal), session.admin ? ' (admin)' : ''),
      themeBtn,
      session.auth_required ? logout : null),
    h('nav', { class: 'sidebar', 'aria-label': 'Main' }, nav,
      h('p', { class: 'keys' }, 'Keys: ', h('kbd', null, 'g'), ' then a page’s letter (', PAGES.map((p) => p.key).join(' '), '), ', h('kbd', null, '/'), ' search')),
    main);
  replace(app, el);
  app.className = '';
  app.removeAttribute('aria-busy');
  applyTheme(theme());
  return { main, health, liveState };
}

async function logoutNow() {
  try { await api.post('/api/ui/logout'); } catch { /* ended anyway */ }
  session = null;
  setCSRF('');
  showLogin('You are logged out.');
}

// ---- health, live state and badges (always on) ----
// The health comes with the change stream's hello; between hellos the
// uptime and every "… ago" move on by the local clock, with no request.
let tickTimer = 0;
let a2aOn = true;
let a2aWaiting = 0; // A2A tasks waiting for an approval, as last counted
let upAt = 0; // when the daemon started, by this browser's clock
let shellStops = [];

const LIVE_WORDS = { live: 'live', connecting: 'connecting…', offline: 'offline' };

function showHealth(state, hello) {
  if (!shell) return;
  const el = shell.health;
  const ls = shell.liveState;
  ls.dataset.state = state;
  ls.textContent = LIVE_WORDS[state] || state;
  ls.title = state === 'live' ? 'Updates arrive as they happen' : 'Not connected: what you see may be out of date; reconnecting';
  if (hello && state === 'live') {
    upAt = hello.at - hello.uptime_seconds * 1000;
    el.dataset.version = hello.version;
    replace(el, h('span', { class: 'dot ok' }), h('span', { class: 'label', id: 'uptime' }, uptimeText()));
    el.title = 'agentd is healthy';
  } else if (state === 'offline') {
    replace(el, h('span', { class: 'dot err' }), h('span', { class: 'label' }, 'unreachable'));
    el.title = 'The change stream is down; reconnecting';
  }
}

function uptimeText() {
  return `${shell?.health.dataset.version || ''} · up ${duration((Date.now() - upAt) / 1000)}`;
}

/** uptimeSeconds is the daemon's uptime by the local clock (0 before the first hello). */
export function uptimeSeconds() { return upAt ? (Date.now() - upAt) / 1000 : 0; }

async function refreshBadge() {
  try {
    const ap = await api.get('/api/approvals');
    // A2A tasks waiting for an approval are on the same page: counted too
    // (not asked again once the daemon said A2A is off).
    let tasks = { tasks: [] };
    if (a2aOn) {
      tasks = await api.get('/api/a2a/tasks?state=input-required').catch((e) => { if (e.status === 404) a2aOn = false; return { tasks: [] }; });
    }
    a2aWaiting = (tasks.tasks || []).filter((t) => t.approval).length;
    const n = (ap.approvals || []).length + a2aWaiting;
    const c = document.getElementById('approvals-count');
    if (c) { c.hidden = n === 0; c.textContent = String(n); }
  } catch { /* older daemon or no right */ }
}

function stopShell() {
  shellStops.forEach((f) => f());
  shellStops = [];
  clearInterval(tickTimer);
}

// ---- routing ----
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const id = PAGES.some((p) => p.id === parts[0]) ? parts[0] : 'overview';
  return { id, params: parts.slice(1), query: new URLSearchParams(query) };
}

function stopPage() {
  if (current) current.stop();
  current = null;
}

async function route() {
  if (!session || !shell) return;
  const { id, params, query } = parseHash();
  stopPage();
  const page = PAGES.find((p) => p.id === id);
  for (const a of document.querySelectorAll('.sidebar a')) {
    if (a.dataset.page === id) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  document.title = `${page.label} · agentd`;
  const main = shell.main;
  replace(main);
  const timers = [];
  const cleanups = [];
  let alive = true;
  const ctx = {
    main, params, query, session, toast,
    go: (hash) => { location.hash = hash; },
    active: () => alive,
    /**
     * live calls load now (unless opts.now is false) and again after each notice of the change
     * stream on topics (see live.js refresher for opts), while the page is
     * shown; it returns {now()} to load again at once.
     */
    live(topics, load, opts) {
      const r = refresher(topics, async () => { if (alive) await load(); }, opts);
      cleanups.push(r.stop);
      return r;
    },
    /** every calls f now and every ms while the page is shown and the tab visible (local timers: no requests). */
    every(ms, f) {
      const tick = async () => { if (alive && !document.hidden) { try { await f(); } catch (e) { console.warn(e); } } };
      tick();
      timers.push(setInterval(tick, ms));
    },
    onLeave: (f) => cleanups.push(f),
  };
  current = { stop() { alive = false; timers.forEach(clearInterval); cleanups.forEach((f) => f()); } };
  try {
    const mod = await import(`./pages/${id}.js`);
    if (!alive) return;
    await mod.default(ctx);
  } catch (e) {
    if (alive) replace(main, h('h1', null, page.label), errorBox(e));
  }
  if (alive && !document.activeElement?.closest('main')) main.focus({ preventScroll: true });
}

// ---- keyboard ----
let gPressed = 0;
document.addEventListener('keydown', (e) => {
  if (!shell || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t.closest && t.closest('input,textarea,select,[contenteditable]')) return;
  if (e.key === '/') {
    const s = shell.main.querySelector('input[type="search"]');
    if (s) { e.preventDefault(); s.focus(); }
    return;
  }
  if (e.key === 'g') { gPressed = Date.now(); return; }
  if (Date.now() - gPressed < 1500) {
    const p = PAGES.find((x) => x.key === e.key);
    gPressed = 0;
    if (p) { e.preventDefault(); location.hash = `#/${p.id}`; }
  }
});

// ---- boot ----
function start() {
  stopShell();
  shell = buildShell();
  shellStops.push(onStatus(showHealth));
  connect(() => {
    // The browser gave up on the stream: a 401 here ends the session
    // (api.js calls the unauthorized handler).
    if (session) api.get('/api/ui/session').catch(() => {});
  });
  // The badge: approvals waiting, and A2A tasks entering or leaving
  // input-required.
  const badge = refresher(['approvals', 'a2a'], refreshBadge, {
    accept: (c) => c.topic === 'approvals' || c.what === 'input-required' || a2aWaiting > 0,
  });
  shellStops.push(badge.stop);
  tickTimer = setInterval(() => {
    if (document.hidden) return;
    const up = document.getElementById('uptime');
    if (up && upAt) up.textContent = uptimeText();
    for (const t of document.querySelectorAll('[data-uptime]')) if (upAt) t.textContent = duration(uptimeSeconds());
    for (const t of document.querySelectorAll('time[data-ago]')) t.textContent = ago(t.getAttribute('datetime'));
  }, 1000);
  route();
}

export function refreshBadges() { refreshBadge(); }

window.addEventListener('hashchange', route);

(async function boot() {
  try {
    const info = await api.get('/api/ui/session');
    session = info;
    setCSRF(info.csrf_token);
    start();
  } catch (e) {
    if (e.status === 401) {
      showLogin();
    } else {
      app.removeAttribute('aria-busy');
      replace(app, h('div', { class: 'login' }, h('div', { class: 'card' }, h('h1', null, 'agentd'), errorBox(e))));
    }
  }
})();
