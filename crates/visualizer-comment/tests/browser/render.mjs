// Renders a PR comment body as GitHub does, for tests/browser.rs: the
// markdown through markdown-it (HTML allowed, as GitHub allows <details>;
// newlines are line breaks, as in GitHub comments) into a page 880 px wide
// (GitHub's comment column) that loads mermaid and draws every ```mermaid
// block, then writes what the browser shows into <pre id="report"> (JSON):
// the headings, each table with the heading before it, each chart.
//
// The page is GitHub's light theme, or its dark one with `dark`; every
// <details> is opened for reading, or left as the body has it with
// `folded`. The report also carries what a reviewer checks by eye: the
// order of the report and the charts, each table's shape, which
// configurations are open, and any number wrapped away from its unit.
//
// usage: node render.mjs BODY.md PAGE.html [light|dark] [open|folded]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import MarkdownIt from 'markdown-it';

const [input, output, theme = 'light', folds = 'open'] = process.argv.slice(2);
const dark = theme === 'dark';
if (!input || !output) {
  console.error('usage: node render.mjs BODY.md PAGE.html');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const mermaidJs = pathToFileURL(join(here, 'node_modules/mermaid/dist/mermaid.min.js')).href;
const md = new MarkdownIt({ html: true, linkify: true, breaks: true });
const html = md.render(readFileSync(input, 'utf8'));

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>PR comment</title>
<style>
  body { margin: 0; background: ${dark ? '#0d1117' : '#fff'}; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: ${dark ? '#e6edf3' : '#1f2328'}; }
  a { color: ${dark ? '#4493f8' : '#0969da'}; }
  .markdown-body { width: 880px; padding: 16px; box-sizing: border-box; }
  table { border-collapse: collapse; display: block; overflow: auto; margin: 0 0 16px; }
  th, td { border: 1px solid ${dark ? '#3d444d' : '#d1d9e0'}; padding: 6px 13px; }
  tr:nth-child(2n) { background: ${dark ? '#151b23' : '#f6f8fa'}; }
  code { background: ${dark ? '#2f353d' : '#eff1f3'}; padding: .2em .4em; border-radius: 6px; font-size: 85%; }
  details { margin: 0 0 16px; }
  h3 { font-size: 1.25em; margin: 24px 0 16px; }
  #report { display: none; }
</style></head>
<body><article class="markdown-body">${html}</article>
<pre id="report">pending</pre>
<script src="${mermaidJs}"></script>
<script>
(async () => {
  const report = (v) => { document.getElementById('report').textContent = JSON.stringify(v); };
  // As authored: which configurations the body opens, before a reader
  // opens the rest.
  const authored = Array.from(document.querySelectorAll('details')).map((d) => {
    let h = d.previousElementSibling;
    while (h && !/^H[1-4]$/.test(h.tagName)) h = h.previousElementSibling;
    const summary = d.querySelector('summary');
    return { after: h ? h.textContent.trim() : null, open: d.open,
             summary: summary ? summary.textContent.trim() : '' };
  });
  // A reader opens the folds; GitHub draws a chart when it is shown.
  if (${JSON.stringify(folds)} === 'open') for (const d of document.querySelectorAll('details')) d.open = true;
  for (const code of document.querySelectorAll('pre > code.language-mermaid')) {
    const div = document.createElement('div');
    div.className = 'mermaid';
    div.textContent = code.textContent;
    code.parentElement.replaceWith(div);
  }
  let error = null;
  try {
    mermaid.initialize({ startOnLoad: false, theme: ${JSON.stringify(dark ? 'dark' : 'default')} });
    // Folded, GitHub draws a chart only when its fold is opened: nothing
    // to draw here (and mermaid cannot measure hidden text).
    if (${JSON.stringify(folds)} === 'open') await mermaid.run({ querySelector: 'div.mermaid' });
  } catch (e) {
    error = String(e && e.message || e);
  }
  const charts = Array.from(document.querySelectorAll('div.mermaid')).map((d) => {
    const svg = d.querySelector('svg');
    if (!svg) return { svg: false };
    const box = svg.getBoundingClientRect();
    return {
      svg: true,
      syntax_error: svg.textContent.includes('Syntax error'),
      paths: svg.querySelectorAll('path, polyline, line').length,
      width: Math.round(box.width),
      height: Math.round(box.height),
      texts: Array.from(svg.querySelectorAll('text')).map((t) => t.textContent.trim()).filter(Boolean),
    };
  });
  const headings = Array.from(document.querySelectorAll('h1, h2, h3, h4')).map((h) => h.textContent.trim());
  const tables = Array.from(document.querySelectorAll('table')).map((t) => {
    let h = t.previousElementSibling;
    while (h && !/^H[1-4]$/.test(h.tagName)) h = h.previousElementSibling;
    return {
      after: h ? h.textContent.trim() : null,
      header: Array.from(t.querySelectorAll('thead th')).map((c) => c.textContent.trim()),
      rows: Array.from(t.querySelectorAll('tbody tr')).map((r) => Array.from(r.children).map((c) => c.textContent.trim())),
    };
  });
  // Where the report and the charts start, in document order.
  const at = (re) => Array.from(document.querySelectorAll('h2, h3, h4')).findIndex((h) => re.test(h.textContent));
  const all = Array.from(document.querySelectorAll('h2, h3, h4'));
  const order = { report: at(/^Benchmark comparison/), charts: at(/^Charts$/), headings: all.length };
  // Every table whole: a header, and each row as wide as it.
  const shapes = Array.from(document.querySelectorAll('table')).map((t) => {
    const width = t.querySelectorAll('thead th').length;
    const rows = Array.from(t.querySelectorAll('tbody tr'));
    return { width, rows: rows.length, ragged: rows.filter((r) => r.children.length !== width).length };
  });
  // Tables wider than the comment's column scroll sideways (GitHub draws
  // them as blocks with overflow: auto): what a reader cannot see at once.
  const scrolls = Array.from(document.querySelectorAll('table')).map((t) => {
    let h = t.previousElementSibling;
    while (h && !/^H[1-4]$/.test(h.tagName)) h = h.previousElementSibling;
    return { after: h ? h.textContent.trim() : null, scrollWidth: t.scrollWidth, clientWidth: t.clientWidth };
  }).filter((t) => t.clientWidth > 0 && t.scrollWidth > t.clientWidth + 1);
  // A number and its unit on one line: each "12.0 %" in a cell drawn in
  // one line box (a wrap gives two), and no breaking space before a "%".
  let unitChecks = 0;
  const wrapped = [];
  const breaking = [];
  for (const cell of document.querySelectorAll('td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (/\\d %/.test(n.data)) breaking.push(n.data);
      for (const m of n.data.matchAll(/[-+]?\\d[\\d.]*\\u00a0%/g)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const lines = new Set(Array.from(r.getClientRects()).map((b) => Math.round(b.top)));
        unitChecks += 1;
        if (lines.size > 1) wrapped.push(m[0]);
      }
    }
  }
  const images = Array.from(document.querySelectorAll('article img')).map((i) => ({ src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0 }));
  report({ error, headings, tables, charts, authored, order, shapes, scrolls, unitChecks, wrapped, breaking, images,
           background: getComputedStyle(document.body).backgroundColor,
           details: document.querySelectorAll('details').length,
           links: Array.from(document.querySelectorAll('article a')).map((a) => ({ text: a.textContent.trim(), href: a.getAttribute('href') })) });
})();
</script>
</body></html>
`;
writeFileSync(output, page);
