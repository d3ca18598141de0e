// A conversation as the dashboard shows it: user and agent messages,
// thinking, tool calls with their arguments and results (untrusted ones
// marked), and images. Fed with stored messages (GET /api/sessions/{id})
// or with a run's live events (the SSE stream of POST .../messages).

import { h, append, replace, badge, spinner, pretty, dataURL } from './dom.js';
import { markdown } from './markdown.js';

const UNTRUSTED = /^<untrusted-data source="([^"]*)">\n([\s\S]*)\n<\/untrusted-data>$/;

/** unwrap splits a result wrapped as untrusted data into its source and text. */
export function unwrap(content) {
  const m = UNTRUSTED.exec(content || '');
  return m ? { source: m[1], text: m[2] } : null;
}

function images(list) {
  return (list || []).map((img, i) => h('img', { src: dataURL(img), alt: `image ${i + 1} (${img.mime_type})`, loading: 'lazy' }));
}

export class Transcript {
  /** el is the container; agent names the agent's side of the conversation. */
  constructor(el, agent) {
    this.el = el;
    this.agent = agent;
    this.turn = null; // the agent message being built
    this.cards = new Map(); // tool call id -> card
  }

  clear() {
    this.el.replaceChildren();
    this.turn = null;
    this.cards.clear();
  }

  scroll() {
    const el = this.el;
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 160 || this.stick) el.scrollTop = el.scrollHeight;
  }

  /** message adds one stored message. */
  message(m) {
    switch (m.role) {
      case 'user':
        this.user((m.parts || []).map((p) => p.text || '').join(''), (m.parts || []).filter((p) => p.image).map((p) => p.image));
        break;
      case 'assistant': {
        const t = this.agentTurn();
        if (m.thinking) t.thinking(m.thinking, false);
        const text = (m.parts || []).map((p) => p.text || '').join('');
        if (text) t.text(text, false);
        for (const c of m.tool_calls || []) this.toolCall(c);
        break;
      }
      case 'tool':
        // A stored call that worked collapses to its summary line.
        for (const r of m.tool_results || []) this.toolResult(r, !!unwrap(r.content), true);
        break;
      default:
    }
  }

  /** user adds the user's message. */
  user(text, imgs = []) {
    this.turn = null;
    this.el.append(h('div', { class: 'msg user' },
      h('div', { class: 'who' }, 'You'),
      h('div', { class: 'bubble' }, text, images(imgs))));
    this.stick = true;
    this.scroll();
    this.stick = false;
  }

  agentTurn() {
    if (!this.turn) {
      const parts = h('div', { class: 'parts' });
      this.el.append(h('div', { class: 'msg assistant' }, h('div', { class: 'who' }, this.agent), parts));
      this.turn = new Turn(parts, () => this.scroll());
    }
    return this.turn;
  }

  toolCall(c) {
    const card = this.agentTurn().tool(c);
    this.cards.set(c.id, card);
    this.scroll();
  }

  toolResult(r, untrusted, collapse = false) {
    let card = this.cards.get(r.call_id);
    if (!card) {
      card = this.agentTurn().tool({ id: r.call_id, name: r.name, arguments: null });
      this.cards.set(r.call_id, card);
    }
    card.result(r, untrusted, collapse);
    this.scroll();
  }

  /** event applies one live event of a run; it returns a status line or null. */
  event(e) {
    switch (e.type) {
      case 'text': this.agentTurn().text(e.text, true); this.scroll(); return 'Writing…';
      case 'thinking': this.agentTurn().thinking(e.text, true); this.scroll(); return 'Thinking…';
      case 'tool_started': this.toolCall(e.tool_call); return `Running ${e.tool_call.name}…`;
      case 'tool_progress': {
        const card = this.cards.get(e.tool_call?.id);
        if (card) card.progress(e.progress);
        return `Running ${e.tool_call?.name}…`;
      }
      case 'tool_finished': this.toolResult({ ...e.tool_result, call_id: e.tool_result.call_id || e.tool_call.id, name: e.tool_result.name || e.tool_call.name }, !!e.untrusted); return 'Thinking…';
      case 'error': this.error(e.error); return null;
      default: return null;
    }
  }

  error(msg) {
    this.agentTurn().parts.append(h('div', { class: 'error-box', role: 'alert' }, msg));
    this.scroll();
  }

  /** note adds a line about the run (stopped, approved, ...). */
  note(text) {
    this.agentTurn().parts.append(h('p', { class: 'small faint' }, text));
    this.scroll();
  }
}

class Turn {
  constructor(parts, scroll) {
    this.parts = parts;
    this.scroll = scroll;
    this.last = null; // {kind, el} of the last part, to extend streamed deltas
  }

  thinking(text, live) {
    if (live && this.last?.kind === 'thinking') {
      this.last.pre.textContent += text;
      return;
    }
    const pre = h('pre', null, text);
    const d = h('details', { class: 'thinking', open: live }, h('summary', null, 'Thinking'), pre);
    this.parts.append(d);
    this.last = { kind: 'thinking', el: d, pre };
  }

  text(text, live) {
    // The model's reply is Markdown, rendered to nodes (never HTML), and
    // rendered again as deltas arrive: an open code fence shows as code.
    if (live && this.last?.kind === 'text') {
      this.last.raw += text;
      replace(this.last.el, markdown(this.last.raw));
      return;
    }
    const b = h('div', { class: 'bubble md' }, markdown(text));
    this.parts.append(b);
    this.last = { kind: 'text', el: b, raw: text };
  }

  tool(c) {
    const card = new ToolCard(c);
    this.parts.append(card.el);
    this.last = { kind: 'tool', el: card.el };
    return card;
  }
}

function oneLine(text, n) {
  const s = String(text).replace(/\s+/g, ' ').trim();
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

class ToolCard {
  constructor(c) {
    this.state = h('span', { class: 'tool-state' }, spinner(`${c.name} is running`));
    this.flags = h('span', { class: 'row' });
    this.body = h('div');
    this.prog = h('div', { class: 'small faint' });
    this.preview = h('span', { class: 'tool-preview small muted' }, c.arguments != null ? oneLine(typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments), 60) : '');
    this.el = h('details', { class: 'tool', open: true, dataset: { tool: c.name, call: c.id || '' } },
      h('summary', null, this.state, h('span', { class: 'tool-name' }, c.name), this.preview, this.flags),
      c.arguments != null ? [h('div', { class: 'section-label' }, 'Arguments'), h('pre', { class: 'tool-args' }, pretty(c.arguments))] : null,
      this.prog, this.body);
  }

  progress(p) {
    if (!p) return;
    const pct = p.total ? ` ${Math.round((100 * p.progress) / p.total)}%` : '';
    this.prog.textContent = `${p.message || 'progress'}${pct}`;
  }

  result(r, untrusted, collapse = false) {
    this.prog.textContent = '';
    this.state.replaceChildren(r.is_error ? badge('error', 'err') : badge('done', 'ok'));
    const u = unwrap(r.content);
    const text = u ? u.text : r.content;
    if (untrusted || u) {
      const src = u?.source || 'an upstream';
      this.flags.replaceChildren(badge(`untrusted · ${src}`, 'untrusted', 'This result came from outside agentd. The model was told to treat it as data, not instructions.'));
    }
    this.body.replaceChildren(
      h('div', { class: 'section-label' }, r.is_error ? 'Error' : 'Result'),
      append(h('div', { class: ['tool-result', (untrusted || u) && 'untrusted', r.is_error && 'is-error'] },
        (untrusted || u) ? h('div', { class: 'small' }, `Untrusted data from ${u?.source || 'an upstream'}: shown as received; the agent sees it marked as data.`) : null,
        h('pre', { class: 'tool-output' }, text || '(empty)'),
      ), images(r.images)));
    // The summary line says what came back, so a closed card still reads.
    this.preview.textContent = `${this.preview.textContent ? `${this.preview.textContent} → ` : '→ '}${oneLine(text || '(empty)', 80)}`;
    if (collapse && !r.is_error && !(r.images || []).length) this.el.open = false;
  }
}
