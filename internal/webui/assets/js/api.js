// The daemon's JSON API, as the dashboard uses it. Credentials are the
// HttpOnly session cookie the browser sends by itself; state-changing
// requests add the session's CSRF token, kept in this module's memory
// only (never in localStorage or a readable cookie).

let csrf = '';
let onUnauthorized = () => {};

/** setCSRF stores the session's CSRF token. */
export function setCSRF(token) { csrf = token || ''; }

/** setUnauthorizedHandler is called when a request answers 401 (the session ended). */
export function setUnauthorizedHandler(f) { onUnauthorized = f; }

/** ApiError is an API error answer: {status, code, message, field, fields}. */
export class ApiError extends Error {
  constructor(status, code, message, field, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field || '';
    this.fields = fields || null; // {field: message} when several are at fault
  }
}

function headers(method, json) {
  const hd = { Accept: 'application/json' };
  if (json) hd['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') hd['X-CSRF-Token'] = csrf;
  return hd;
}

async function failure(r) {
  const text = await r.text().catch(() => '');
  let e = {};
  try { e = JSON.parse(text).error || {}; } catch { /* not JSON */ }
  const msg = e.message || text || r.statusText;
  const err = new ApiError(r.status, e.code || `http_${r.status}`, msg, e.field, e.fields);
  if (r.status === 401) onUnauthorized(err);
  return err;
}

async function request(method, path, body) {
  const init = { method, headers: headers(method, body !== undefined), credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) init.body = JSON.stringify(body);
  let r;
  try {
    r = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'network', `cannot reach agentd: ${e.message}`);
  }
  if (!r.ok) throw await failure(r);
  if (r.status === 204) return null;
  const text = await r.text();
  return text ? JSON.parse(text) : null;
}

/** api calls the JSON API: api.get('/api/agents'), api.post(path, body), ... */
export const api = {
  get: (path) => request('GET', path),
  post: (path, body) => request('POST', path, body),
  put: (path, body) => request('PUT', path, body),
  patch: (path, body) => request('PATCH', path, body),
  del: (path) => request('DELETE', path),
};

/** qs builds a query string from an object, skipping empty values. */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== '' && v != null) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * stream POSTs body to path asking for server-sent events and calls
 * onEvent(type, data) for each. It resolves when the stream ends; abort
 * signal cancels the request (and, server side, the run).
 */
export async function stream(path, body, onEvent, signal) {
  let r;
  try {
    r = await fetch(path, {
      method: 'POST', headers: { ...headers('POST', true), Accept: 'text/event-stream' },
      body: JSON.stringify(body), credentials: 'same-origin', cache: 'no-store', signal,
    });
  } catch (e) {
    if (e.name === 'AbortError') return;
    throw new ApiError(0, 'network', `cannot reach agentd: ${e.message}`);
  }
  if (!r.ok) throw await failure(r);
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      if (e.name === 'AbortError') return;
      throw e;
    }
    if (chunk.done) break;
    buf += chunk.value.replace(/\r\n/g, '\n');
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let type = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) type = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) {
        let v;
        try { v = JSON.parse(data.join('\n')); } catch { v = data.join('\n'); }
        onEvent(type, v);
      }
    }
  }
}
