// Renders a PR comment body as GitHub does, for tests/browser.rs: the
// markdown through markdown-it (HTML allowed, as GitHub allows <details>;
// newlines are line breaks, as in GitHub comments) into a page 880 px wide
// (GitHub's comment column) that loads mermaid and draws every ```mermaid
// block, then writes what the browser shows into <pre id="report"> (JSON):
// the headings, each table with the heading before it, each chart.
//
// usage: node render.mjs BODY.md PAGE.html
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import MarkdownIt from 'markdown-it';

const [input, output] = process.argv.slice(2);
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
  body { margin: 0; background: #fff; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; }
  .markdown-body { width: 880px; padding: 16px; box-sizing: border-box; }
  table { border-collapse: collapse; display: block; overflow: auto; margin: 0 0 16px; }
  th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
  tr:nth-child(2n) { background: #f6f8fa; }
  code { background: #eff1f3; padding: .2em .4em; border-radius: 6px; font-size: 85%; }
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
  // A reader opens the folds; GitHub draws a chart when it is shown.
  for (const d of document.querySelectorAll('details')) d.open = true;
  for (const code of document.querySelectorAll('pre > code.language-mermaid')) {
    const div = document.createElement('div');
    div.className = 'mermaid';
    div.textContent = code.textContent;
    code.parentElement.replaceWith(div);
  }
  let error = null;
  try {
    mermaid.initialize({ startOnLoad: false, theme: 'default' });
    await mermaid.run({ querySelector: 'div.mermaid' });
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
  report({ error, headings, tables, charts, details: document.querySelectorAll('details').length,
           links: Array.from(document.querySelectorAll('article a')).map((a) => ({ text: a.textContent.trim(), href: a.getAttribute('href') })) });
})();
</script>
</body></html>
`;
writeFileSync(output, page);
