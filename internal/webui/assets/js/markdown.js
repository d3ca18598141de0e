// A small Markdown renderer for model replies. It builds DOM nodes, never
// HTML strings: whatever the model writes (a <script>, an onerror=) stays
// text, so there is nothing to sanitize after the fact. It covers what
// models write: fenced code blocks, headings, lists, quotes, paragraphs,
// inline code, bold, italic and links (http, https and mailto only).

import { h } from './dom.js';

const SAFE_URL = /^(https?:|mailto:)/i;

/** inline renders one line's spans: code first, then links, bold, italic. */
function inline(text) {
  const out = [];
  // Alternatives in priority order; the first match at the leftmost
  // position wins.
  const re = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|(?<![\w])_([^_\n]+)_(?![\w])/g;
  let at = 0;
  for (let m; (m = re.exec(text));) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[1]) out.push(h('code', null, m[2]));
    else if (m[3] !== undefined) {
      out.push(SAFE_URL.test(m[4]) ? h('a', { href: m[4], target: '_blank', rel: 'noopener noreferrer nofollow' }, inline(m[3])) : m[0]);
    } else if (m[5] !== undefined || m[6] !== undefined) out.push(h('strong', null, inline(m[5] ?? m[6])));
    else out.push(h('em', null, inline(m[7] ?? m[8])));
    at = re.lastIndex;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** markdown returns the nodes of a Markdown document. */
export function markdown(src) {
  const lines = String(src).replace(/\r\n?/g, '\n').split('\n');
  const out = [];
  let para = [];
  const flush = () => {
    if (para.length) out.push(h('p', null, para.flatMap((l, i) => (i ? [h('br'), ...inline(l)] : inline(l)))));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+#.-]*)\s*$/);
    if (fence) {
      flush();
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      // An unclosed fence (a reply still streaming) runs to the end.
      out.push(h('pre', { class: 'code-block', dataset: fence[2] ? { lang: fence[2] } : {} },
        h('code', fence[2] ? { class: `language-${fence[2]}` } : null, body.join('\n'))));
      continue;
    }
    const head = line.match(/^(#{1,6})\s+(.*)$/);
    if (head) {
      flush();
      // Headings stay small inside a chat bubble: h4 to h6.
      out.push(h(`h${Math.min(6, head[1].length + 3)}`, null, inline(head[2])));
      continue;
    }
    const item = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      const items = [];
      for (; i < lines.length; i++) {
        const m = lines[i].match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
        if (m && /\d/.test(m[1]) === ordered) items.push(h('li', null, inline(m[2])));
        else if (lines[i].match(/^\s{2,}\S/) && items.length) items[items.length - 1].append(' ', ...inline(lines[i].trim()));
        else break;
      }
      i--;
      out.push(h(ordered ? 'ol' : 'ul', null, items));
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quote = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]); i++) quote.push(lines[i].replace(/^\s*>\s?/, ''));
      i--;
      out.push(h('blockquote', null, markdown(quote.join('\n'))));
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { flush(); out.push(h('hr')); continue; }
    if (!line.trim()) { flush(); continue; }
    para.push(line);
  }
  flush();
  return out;
}
