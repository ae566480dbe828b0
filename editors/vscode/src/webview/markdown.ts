/** A small, safe markdown renderer: everything is escaped, then a known subset is marked up. */

/** Escape text for HTML element and attribute content. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function inline(text: string): string {
  // Code spans first, so their content is not further marked up.
  const parts = text.split(/(`[^`\n]+`)/g);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) {
        return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      }
      let s = escapeHtml(part);
      s = s.replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>');
      s = s.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1<em>$2</em>');
      s = s.replace(/(^|[^_\w])_([^_\n]+)_(?!\w)/g, '$1<em>$2</em>');
      s = s.replace(
        /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
        (_m, label: string, url: string) => `<a href="${url}">${label}</a>`,
      );
      return s;
    })
    .join('');
}

interface Block {
  kind: 'code' | 'para' | 'heading' | 'ul' | 'ol' | 'quote';
  lines: string[];
  lang?: string;
  level?: number;
  open?: boolean;
}

function blocks(src: string): Block[] {
  const out: Block[] = [];
  let cur: Block | null = null;
  const flush = (): void => {
    if (cur) {
      out.push(cur);
      cur = null;
    }
  };
  for (const line of src.replace(/\r\n/g, '\n').split('\n')) {
    const c = cur as Block | null;
    if (c && c.kind === 'code') {
      if (/^\s*```\s*$/.test(line)) {
        c.open = false;
        flush();
      } else {
        c.lines.push(line);
      }
      continue;
    }
    const fence = /^\s*```\s*([\w+#.-]*)\s*$/.exec(line);
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const ul = /^\s*[-*+]\s+(.*)$/.exec(line);
    const ol = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (fence) {
      flush();
      cur = { kind: 'code', lines: [], lang: fence[1], open: true };
    } else if (heading) {
      flush();
      out.push({ kind: 'heading', lines: [heading[2]], level: heading[1].length });
    } else if (ul) {
      if (c?.kind !== 'ul') { flush(); cur = { kind: 'ul', lines: [] }; }
      (cur as Block | null)?.lines.push(ul[1]);
    } else if (ol) {
      if (c?.kind !== 'ol') { flush(); cur = { kind: 'ol', lines: [] }; }
      (cur as Block | null)?.lines.push(ol[1]);
    } else if (quote) {
      if (c?.kind !== 'quote') { flush(); cur = { kind: 'quote', lines: [] }; }
      (cur as Block | null)?.lines.push(quote[1]);
    } else if (line.trim() === '') {
      flush();
    } else {
      if (c?.kind !== 'para') { flush(); cur = { kind: 'para', lines: [] }; }
      (cur as Block | null)?.lines.push(line);
    }
  }
  flush();
  return out;
}

/** Render markdown to HTML; an unterminated code fence (mid-stream) renders as a code block. */
export function renderMarkdown(src: string): string {
  return blocks(src)
    .map((b) => {
      switch (b.kind) {
        case 'code': {
          const cls = b.lang ? ` class="language-${escapeHtml(b.lang)}"` : '';
          const label = b.lang ? `<span class="code-lang">${escapeHtml(b.lang)}</span>` : '';
          return `<div class="code-block">${label}<pre><code${cls}>${escapeHtml(b.lines.join('\n'))}</code></pre></div>`;
        }
        case 'heading':
          return `<h${b.level}>${inline(b.lines[0])}</h${b.level}>`;
        case 'ul':
        case 'ol':
          return `<${b.kind}>${b.lines.map((l) => `<li>${inline(l)}</li>`).join('')}</${b.kind}>`;
        case 'quote':
          return `<blockquote>${inline(b.lines.join(' '))}</blockquote>`;
        case 'para':
          return `<p>${b.lines.map(inline).join('<br>')}</p>`;
      }
    })
    .join('\n');
}
