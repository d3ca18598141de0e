// The change stream: one EventSource per tab on /api/events, instead of
// every page polling its routes every few seconds. The daemon sends a
// notice when something changes (a run started or ended, an approval is
// waiting, an MCP server changed state, an audit record was written, an
// A2A task moved, agents or tools changed); a page reads the route it
// shows only then. The first event, hello, carries the health, so the
// header needs no request either. EventSource reconnects by itself and
// sends Last-Event-ID: the daemon replays what was missed, or says reset
// (read everything again) when it cannot.

const listeners = new Set(); // {topics: Set|null, f(change)}
const statusWatchers = new Set();
let source = null;
let status = 'offline'; // connecting, live, offline
let lastHello = null;
let lastID = '';
let retryTimer = 0;
let onClosed = () => {};
// stale: a page read its data while no stream was live, so it may have
// missed a notice; the next first hello (one not resuming an id) tells
// every page to read again.
let stale = false;
let liveWaiters = [];

function setStatus(s) {
  if (s === status) return;
  status = s;
  if (s === 'live') { liveWaiters.forEach((f) => f()); liveWaiters = []; }
  for (const f of statusWatchers) f(s, lastHello);
}

function emit(change) {
  for (const l of [...listeners]) {
    if (change.reset || !l.topics || l.topics.has(change.topic)) {
      try { l.f(change); } catch (e) { console.warn(e); }
    }
  }
}

/**
 * connect opens the stream (once per tab). closed is called when the
 * browser gave up on it (an answer other than 200: the session ended or
 * the daemon refused), so the caller can check the session; the stream
 * is then opened again after a pause.
 */
export function connect(closed) {
  if (closed) onClosed = closed;
  if (source) return;
  clearTimeout(retryTimer);
  setStatus('connecting');
  const url = `/api/events${lastID ? `?last_event_id=${encodeURIComponent(lastID)}` : ''}`;
  const es = new EventSource(url, { withCredentials: true });
  source = es;
  es.addEventListener('hello', (e) => {
    const hello = JSON.parse(e.data);
    hello.at = Date.now();
    lastHello = hello;
    const resumed = lastID !== '';
    lastID = e.lastEventId || lastID;
    setStatus('live');
    for (const f of statusWatchers) f(status, hello);
    // A reconnect the daemon could not resume (it restarted, or more
    // happened than it keeps), or a first stream after pages read their
    // data without one: read everything again. Otherwise the daemon
    // replays what was missed as ordinary notices.
    if (hello.reset || (!resumed && stale)) emit({ topic: '*', reset: true });
    stale = false;
  });
  es.addEventListener('change', (e) => {
    lastID = e.lastEventId || lastID;
    let c;
    try { c = JSON.parse(e.data); } catch { return; }
    if (c.topic === 'health' && c.what === 'stopping') setStatus('offline');
    emit(c);
  });
  es.addEventListener('error', () => {
    if (es.readyState === EventSource.CLOSED) {
      // Not retried by the browser: a 401, a 503, or the daemon gone.
      if (source === es) source = null;
      setStatus('offline');
      onClosed();
      retryTimer = setTimeout(() => connect(), 5000);
    } else {
      setStatus('offline'); // the browser reconnects by itself
    }
  });
}

/** disconnect closes the stream (logout). */
export function disconnect() {
  clearTimeout(retryTimer);
  if (source) source.close();
  source = null;
  lastHello = null;
  lastID = '';
  setStatus('offline');
}

/**
 * onChange calls f(change) for each notice of topics (an array; null:
 * every topic), and f({topic: '*', reset: true}) when everything must be
 * read again. It returns the function that stops it.
 */
export function onChange(topics, f) {
  const l = { topics: topics ? new Set(topics) : null, f };
  listeners.add(l);
  return () => listeners.delete(l);
}

/** onStatus calls f(status, hello) now and whenever the stream's state changes. */
export function onStatus(f) {
  statusWatchers.add(f);
  f(status, lastHello);
  return () => statusWatchers.delete(f);
}

/** whenLive resolves once the stream is live, or after ms. */
function whenLive(ms) {
  if (status === 'live') return Promise.resolve();
  return new Promise((resolve) => {
    liveWaiters.push(resolve);
    setTimeout(resolve, ms);
  });
}

/** hello is the last hello (health, topics) with `at`, when it came; null before. */
export function hello() { return lastHello; }

/**
 * refresher runs load now, then again after each notice that passes
 * accept, at most one load at a time and at least gap ms apart: a burst
 * of notices is one load. While the tab is hidden it waits for it to
 * show (now: false skips the first load, for a caller that just loaded).
 * It returns {stop(), now()}.
 */
export function refresher(topics, load, { accept = () => true, gap = 300, now = true } = {}) {
  let running = false;
  let dirty = false;
  let stopped = false;
  let timer = 0;
  let lastRun = 0;
  let first = now;
  const run = async () => {
    if (stopped) return;
    if (running || document.hidden) { dirty = true; return; }
    const wait = lastRun + gap - Date.now();
    if (wait > 0) {
      dirty = true;
      if (!timer) timer = setTimeout(() => { timer = 0; if (dirty) { dirty = false; run(); } }, wait);
      return;
    }
    running = true;
    dirty = false;
    if (first) {
      // The first read waits (briefly) for the stream, so that nothing
      // changes unheard between the read and the subscription.
      first = false;
      await whenLive(1000);
      if (stopped) { running = false; return; }
    }
    if (status !== 'live') stale = true;
    lastRun = Date.now();
    try { await load(); } catch (e) { console.warn(e); }
    running = false;
    if (dirty) { dirty = false; run(); }
  };
  const off = onChange(topics, (c) => { if (c.reset || accept(c)) run(); });
  const vis = () => { if (!document.hidden && dirty) { dirty = false; run(); } };
  document.addEventListener('visibilitychange', vis);
  if (now) run(); else lastRun = Date.now();
  return {
    stop() {
      stopped = true;
      off();
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', vis);
    },
    /** now loads again at once (after the page changed something itself). */
    now: () => { lastRun = 0; run(); },
  };
}
