// Chat with any agent, in a new session or continuing any session
// (whichever protocol started it). Replies stream over the message
// route's SSE events. A run keeps going when the user looks at another
// page; coming back to its session shows it again, live.

import { api, stream } from '../api.js';
import { h, replace, badge, empty, errorBox, timeAgo, spinner, same, patch } from '../dom.js';
import { icon } from '../icons.js';
import { Transcript } from '../transcript.js';
import { decisionButtons } from './approvals.js';

// The run in progress in this tab, if any: it outlives the page.
let live = null; // {agent, session, input, images, base, events: [], render, done, ctrl}

const MAX_IMAGE = 5 << 20;

function readImage(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve({ mime_type: file.type, data: String(r.result).split(',')[1] || '' });
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

export default async function chat(ctx) {
  const [agentParam, sessionParam] = ctx.params;
  const agentsResp = await api.get('/api/agents');
  const agents = (agentsResp.agents || []).map((e) => e.manifest).filter((m) => m.kind !== 'mcp_proxy');
  if (agents.length === 0) {
    replace(ctx.main, h('div', { class: 'page-head' }, h('h1', null, 'Chat')),
      empty('No agent to chat with', 'Define one in config.toml ([[agents]]) or create one on the ', h('a', { href: '#/agents/new' }, 'Agents page'), '.'));
    return;
  }
  const agent = agents.find((a) => a.name === agentParam) ? agentParam : agents[0].name;
  let session = sessionParam || '';

  // ---- layout ----
  const select = h('select', { id: 'chat-agent', 'aria-label': 'Agent' },
    agents.map((a) => h('option', { value: a.name, selected: a.name === agent }, a.name)));
  select.addEventListener('change', () => ctx.go(`#/chat/${encodeURIComponent(select.value)}`));
  const list = h('div', { class: 'list', id: 'chat-sessions', role: 'list' });
  const meta = h('div', { class: 'row small muted', id: 'chat-meta' });
  const log = h('div', { class: 'transcript', id: 'transcript', role: 'log', 'aria-label': 'Conversation', tabindex: '0' });
  const status = h('div', { class: 'run-status', id: 'run-status', role: 'status', 'aria-live': 'polite' });
  const attachments = h('div', { class: 'attachments' });
  const input = h('textarea', { id: 'chat-input', rows: '2', placeholder: `Message ${agent}…  (Enter sends, Shift+Enter for a new line)`, 'aria-label': `Message to ${agent}` });
  const file = h('input', { type: 'file', accept: 'image/png,image/jpeg,image/gif,image/webp', multiple: true, class: 'visually-hidden', id: 'chat-file' });
  const attach = h('label', { class: 'btn icon-btn', for: 'chat-file', title: 'Attach images', tabindex: '0', role: 'button', 'aria-label': 'Attach images' }, icon('image'));
  const sendBtn = h('button', { class: 'btn primary', type: 'submit', id: 'chat-send' }, icon('send', 16), 'Send');
  const stopBtn = h('button', { class: 'btn danger', type: 'button', id: 'chat-stop', hidden: true }, icon('stop', 16), 'Stop');
  const form = h('form', { class: 'composer' }, file, attach, input, sendBtn, stopBtn);
  const main = h('section', { class: 'card chat-main', 'aria-label': 'Conversation' },
    h('div', { class: 'chat-head' }, h('h2', null, agent), meta), log, status, attachments, form);
  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Chat'), h('label', { class: 'visually-hidden', for: 'chat-agent' }, 'Agent'), select,
      h('span', { class: 'sub' }, agents.find((a) => a.name === agent)?.description || '')),
    h('div', { class: 'chat' },
      h('aside', { class: 'card chat-side', 'aria-label': 'Sessions' },
        h('a', { class: 'btn', href: `#/chat/${encodeURIComponent(agent)}`, id: 'chat-new' }, icon('plus', 16), 'New chat'),
        h('h2', { class: 'small muted' }, `Sessions with ${agent}`),
        list),
      main));
  attach.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); file.click(); } });

  const tr = new Transcript(log, agent);
  let pending = []; // images to send
  let messages = []; // stored messages of the session

  function showAttachments() {
    replace(attachments, pending.map((img, i) => h('span', { class: 'row' },
      h('img', { src: `data:${img.mime_type};base64,${img.data}`, alt: `attachment ${i + 1}` }),
      h('button', { class: 'btn small ghost', type: 'button', 'aria-label': `Remove attachment ${i + 1}`, onclick: () => { pending.splice(i, 1); showAttachments(); } }, '✕'))));
  }
  file.addEventListener('change', async () => {
    for (const f of file.files) {
      if (f.size > MAX_IMAGE) { ctx.toast(`${f.name} is larger than 5 MiB`, 'err'); continue; }
      pending.push(await readImage(f));
    }
    file.value = '';
    showAttachments();
  });

  function setBusy(busy, line) {
    sendBtn.hidden = busy;
    stopBtn.hidden = !busy;
    input.disabled = false;
    replace(status, busy ? [spinner('Running'), line || 'Working…'] : (line || ''));
  }

  function showMeta(s) {
    replace(meta, s
      ? [h('span', { class: 'mono', title: 'session id' }, s.id), badge(`from ${s.origin || '?'}`, 'info'), s.principal ? badge(s.principal) : null,
        h('a', { href: `#/sessions/${encodeURIComponent(s.id)}` }, 'details')]
      : h('span', null, 'New conversation'));
  }

  let shown = null;
  async function loadList() {
    try {
      const r = await api.get(`/api/sessions?agent=${encodeURIComponent(agent)}&limit=50`);
      const ss = r.sessions || [];
      if (shown && same(shown, [ss, session])) return; // keep focus and scroll
      shown = [ss, session];
      patch(list, ss.length === 0
        ? h('p', { class: 'small faint' }, 'No sessions yet. Say something to start one.')
        : ss.map((s) => h('a', {
          class: 'list-item', role: 'listitem', href: `#/chat/${encodeURIComponent(agent)}/${encodeURIComponent(s.id)}`,
          'aria-current': s.id === session ? 'true' : null,
        }, h('span', { class: 'title' }, s.title || '(untitled)'),
        h('span', { class: 'meta' }, badge(s.origin || '?'), timeAgo(s.updated_at)))));
    } catch (e) {
      replace(list, errorBox(e));
    }
  }

  function attachLive() {
    // Show the tab's run of this session: the history before it, its
    // input, and every event so far; then follow it.
    tr.clear();
    for (const m of messages.slice(0, live.base)) tr.message(m);
    tr.user(live.input, live.images);
    let line = 'Working…';
    for (const e of live.events) line = tr.event(e) || line;
    setBusy(true, line);
    live.render = (e) => {
      const l = tr.event(e);
      if (l) replace(status, spinner('Running'), l);
    };
    const run = live;
    run.finish = (failed) => finished(run, failed);
  }

  // finished shows how a run ended, on whichever page shows it now.
  function finished(run, failed) {
    if (failed) {
      tr.error(failed.message);
      setBusy(false, '');
    } else if (run.ctrl.signal.aborted) {
      tr.note('Stopped: the run was cancelled.');
      setBusy(false, 'Stopped.');
    } else {
      const f = run.final;
      const why = f?.stop_reason && f.stop_reason !== 'end_turn' ? ` (${f.stop_reason.replace('_', ' ')})` : '';
      const u = f?.usage && (f.usage.input_tokens || f.usage.output_tokens) ? ` · ${f.usage.input_tokens} in / ${f.usage.output_tokens} out tokens` : '';
      setBusy(false, run.events.some((e) => e.type === 'error') ? 'The run failed.' : `Done${why}${u}`);
    }
    loadList();
  }

  async function loadSession() {
    if (!session) {
      tr.clear();
      showMeta(null);
      replace(log, empty(`Start a conversation with ${agent}`, 'Type below. Tool calls, their arguments and results show up as they happen; results from outside agentd are marked untrusted.'));
      return;
    }
    try {
      const s = await api.get(`/api/sessions/${encodeURIComponent(session)}`);
      messages = s.messages || [];
      showMeta(s);
      if (s.agent !== agent) {
        ctx.go(`#/chat/${encodeURIComponent(s.agent)}/${encodeURIComponent(s.id)}`);
        return;
      }
      if (live && !live.done && live.session === session) {
        attachLive();
      } else {
        tr.clear();
        messages.forEach((m) => tr.message(m));
        log.scrollTop = log.scrollHeight;
      }
    } catch (e) {
      replace(log, errorBox(e));
    }
  }

  async function send() {
    const text = input.value.trim();
    if (!text && pending.length === 0) return;
    if (live && !live.done) { ctx.toast('A reply is still running: wait for it or stop it first.', 'err'); return; }
    if (!session) tr.clear();
    const imgs = pending;
    pending = [];
    showAttachments();
    input.value = '';
    tr.user(text, imgs);
    const run = { agent, session, input: text, images: imgs, base: messages.length, events: [], done: false, ctrl: new AbortController() };
    live = run;
    run.render = (e) => { const l = tr.event(e); if (l) replace(status, spinner('Running'), l); };
    run.finish = (f) => finished(run, f);
    setBusy(true, 'Waiting for the model…');
    let failed = null;
    try {
      await stream(`/api/agents/${encodeURIComponent(agent)}/messages`, { message: text, session_id: session || undefined, images: imgs.length ? imgs : undefined }, (type, data) => {
        const e = { ...data, type };
        if (type === 'session' && !run.session) {
          run.session = data.session_id;
          if (ctx.active() && !session) {
            session = data.session_id;
            history.replaceState(null, '', `#/chat/${encodeURIComponent(agent)}/${encodeURIComponent(session)}`);
            showMeta({ id: session, origin: 'http', principal: ctx.session.principal });
            loadList();
          }
        }
        if (type === 'final') run.final = data;
        run.events.push(e);
        run.render?.(e);
      }, run.ctrl.signal);
    } catch (e) {
      failed = e;
    }
    run.done = true;
    if (live === run) live = null;
    run.finish?.(failed);
    if (ctx.active()) input.focus();
  }

  // A call of this session's run that needs approval waits for the
  // operator (the HTTP edge cannot ask): offer the decision right here.
  const asked = new Map(); // approval id -> inline box
  async function inlineApprovals() {
    const sid = live && !live.done && live.agent === agent ? live.session : '';
    let list = [];
    if (sid) {
      try { list = ((await api.get('/api/approvals')).approvals || []).filter((a) => a.session_id === sid); } catch { /* none */ }
    }
    const ids = new Set(list.map((a) => a.id));
    for (const [id, el] of asked) if (!ids.has(id)) { el.remove(); asked.delete(id); }
    for (const a of list) {
      if (asked.has(a.id)) continue;
      const el = h('div', { class: 'approval-inline', role: 'alert', dataset: { approval: a.id } },
        h('strong', null, `${a.tool} needs your approval`), h('p', { class: 'small' }, a.reason),
        decisionButtons(ctx, a, inlineApprovals));
      asked.set(a.id, el);
      log.append(el);
      log.scrollTop = log.scrollHeight;
    }
    if (list.length) replace(status, spinner('Waiting'), `Waiting for your approval of ${list.map((a) => a.tool).join(', ')}…`);
  }
  ctx.live(['approvals'], inlineApprovals);

  form.addEventListener('submit', (e) => { e.preventDefault(); send(); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  stopBtn.addEventListener('click', () => { if (live) live.ctrl.abort(); });
  ctx.onLeave(() => { if (live) { live.render = null; live.finish = null; } });

  setBusy(false, '');
  await loadSession();
  ctx.live(['runs'], loadList, { accept: (c) => c.what !== 'started', gap: 1000 });
  input.focus();
}
