"""Renders a visualizer-comment insta snapshot body to an HTML page that looks
like a GitHub comment (used by scripts/comment-screenshot).

usage: render_comment_html.py SNAPSHOT OUT.html VERSION  (MERMAID_JS: path of mermaid.min.js)
"""
import html
import os
import sys

from markdown_it import MarkdownIt
snap=open(sys.argv[1]).read()
body=snap.split('---\n',2)[2]
body=body.replace('[version]',sys.argv[3])
md=MarkdownIt('commonmark',{'html':True,'linkify':True,'breaks':True}).enable('linkify').enable('table').enable('strikethrough')
def fence(self,tokens,idx,options,env):
    t=tokens[idx]
    if t.info.strip()=='mermaid':
        return '<pre class="mermaid">'+html.escape(t.content)+'</pre>'
    return '<pre><code>'+html.escape(t.content)+'</code></pre>'
md.add_render_rule('fence',fence)
out=md.render(body)
css='''body{font-family:-apple-system,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;font-size:14px;line-height:1.5;color:#1f2328;background:#fff;margin:0}
.box{width:860px;margin:16px;border:1px solid #d1d9e0;border-radius:6px}
.hdr{background:#f6f8fa;border-bottom:1px solid #d1d9e0;padding:8px 16px;color:#59636e}
.md{padding:16px}
h2{font-size:1.5em;border-bottom:1px solid #d1d9e0;padding-bottom:.3em}h3{font-size:1.25em}h4{font-size:1em}
table{border-collapse:collapse;display:block;overflow:auto;margin:8px 0}td,th{border:1px solid #d1d9e0;padding:4px 10px}tr:nth-child(2n){background:#f6f8fa}
a{color:#0969da;text-decoration:none}code,pre{background:#f6f8fa;border-radius:6px}pre{padding:12px}
hr{border:0;border-top:4px solid #d1d9e0}sub{color:#59636e}details summary{cursor:pointer}
pre.mermaid{background:#fff}'''
page='''<!doctype html><html><head><meta charset="utf-8"><style>%s</style>
<script src="file://%s"></script></head>
<body><div class="box"><div class="hdr"><b>github-actions</b> bot commented</div><div class="md">%s</div></div>
<script>mermaid.initialize({startOnLoad:true,theme:"default"});</script></body></html>'''%(css,os.environ['MERMAID_JS'],out)
open(sys.argv[2],'w').write(page)
