"""Pages for the render tests: what scripts build, and what a hostile page tries."""

from __future__ import annotations

SPA_TEXT = "This paragraph only exists once the page's script has fetched and inserted it."


def spa_shell(data_path: str = "/data.json") -> str:
    """An empty shell whose script fetches its content (a typical single-page app)."""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title></head>
<body><div id="root"></div><script>
fetch({data_path!r}).then(r => r.json()).then(d => {{
  document.getElementById('root').innerHTML =
    '<article><h1>' + d.title + '</h1>' + d.paragraphs.map(p => '<p>' + p + '</p>').join('') + '</article>';
}});
</script>{"<script>/* bundle */</script>" * 3}</body></html>"""


def spa_data() -> str:
    import json

    paragraphs = [SPA_TEXT] + [
        f"Section {n} of the rendered article explains one more detail of the subject at length."
        for n in range(12)
    ]
    return json.dumps({"title": "Rendered by the browser", "paragraphs": paragraphs})


def escape_attempts(refused_base: str, refused_host: str, udp_port: int) -> str:
    """A page whose scripts and markup try every way out to a refused address."""
    return f"""<!doctype html><html><head><title>Escapes</title>
<link rel="dns-prefetch" href="{refused_base}/">
<link rel="preconnect" href="{refused_base}/">
<link rel="prefetch" href="{refused_base}/prefetch">
<link rel="stylesheet" href="{refused_base}/style.css">
</head><body><h1>Escapes</h1><p id="out">A page that tries to reach a private address in every way it can.</p>
<iframe src="{refused_base}/frame"></iframe>
<script src="{refused_base}/script.js"></script>
<script>
fetch('{refused_base}/fetch').catch(() => 0);
fetch('{refused_base}/cors', {{method: 'POST', body: 'x', mode: 'no-cors'}}).catch(() => 0);
try {{ new WebSocket('{refused_base.replace("http", "ws")}/ws'); }} catch (e) {{}}
try {{ new EventSource('{refused_base}/events'); }} catch (e) {{}}
try {{ navigator.sendBeacon('{refused_base}/beacon', 'x'); }} catch (e) {{}}
try {{ const x = new XMLHttpRequest(); x.open('GET', '{refused_base}/xhr'); x.send(); }} catch (e) {{}}
try {{
  const stun = {{urls: 'stun:{refused_host}:{udp_port}'}};
  const turn = {{urls: 'turn:{refused_host}:{udp_port}?transport=udp', username: 'u', credential: 'c'}};
  const pc = new RTCPeerConnection({{iceServers: [stun, turn]}});
  pc.createDataChannel('leak');
  pc.createOffer().then(o => pc.setLocalDescription(o));
}} catch (e) {{}}
fetch('file:///etc/hostname').then(r => r.text())
  .then(t => document.body.append('LE' + 'AKED:' + t)).catch(() => 0);
try {{ navigator.serviceWorker.register('/sw.js').catch(() => 0); }} catch (e) {{}}
try {{ window.open('/popup'); }} catch (e) {{}}
location.hash = 'done';
</script></body></html>"""


def never_settles() -> str:
    """Text that is there at once, and scripts that keep fetching and changing it forever."""
    return """<!doctype html><html><head><title>Live</title></head><body>
<article><h1>Live ticker</h1>
<p>This page keeps polling its server and rewriting a counter, so it never settles.</p>
<p id="count">0</p></article><script>
let n = 0;
setInterval(() => { document.getElementById('count').textContent = 'tick ' + (++n) + ' '.repeat(n % 7);
                    fetch('/poll?' + n).catch(() => 0); }, 50);
</script></body></html>"""


def subresources() -> str:
    return """<!doctype html><html><head><title>Heavy</title><link rel="stylesheet" href="/style.css">
<style>@font-face { font-family: F; src: url(/font.woff2); } body { font-family: F; }</style></head>
<body><h1>Heavy page</h1><p>A page with an image, a video, audio and a web font, none of which carry text.</p>
<img src="/image.png"><video src="/video.mp4" autoplay></video><audio src="/audio.mp3" autoplay></audio>
</body></html>"""


def shadow_component() -> str:
    return """<!doctype html><html><head><title>Components</title></head><body>
<doc-page></doc-page><script>
customElements.define('doc-page', class extends HTMLElement {
  constructor() { super(); this.attachShadow({mode: 'open'}).innerHTML =
    '<h1>Component docs</h1>' +
    '<p>Everything on this page lives in an open shadow root of a custom element.</p>'; }
});
</script></body></html>"""


def huge_dom(elements: int) -> str:
    return f"""<!doctype html><html><head><title>Huge</title></head><body><p>Many elements follow.</p><script>
const f = document.createDocumentFragment();
for (let i = 0; i < {elements}; i++) f.appendChild(document.createElement('span'));
document.body.appendChild(f);
</script></body></html>"""


def loads_scripts(count: int) -> str:
    tags = "".join(f'<script src="/big{n}.js"></script>' for n in range(count))
    body = "<body><p>Text before the scripts.</p></body>"
    return f"<!doctype html><html><head><title>Scripts</title>{tags}</head>{body}</html>"


HOG_LIMIT_MB = 1536
"""Where the memory-hungry pages stop on their own (so a broken limit cannot take the machine)."""


def _hog(script: str, *, note: str = "") -> str:
    """A page with some text that allocates memory in its scripts and keeps its network busy and
    its text changing, so it never settles: only a memory limit stops it before the deadline."""
    return f"""<!doctype html><html><head><title>Hungry</title></head><body>
<div id="app"><p>This page keeps taking memory while it renders.{note}</p><p id="count">0 MB</p></div>
<script>
setInterval(() => fetch('/poll').catch(() => 0), 100);
const show = (text) => {{ document.getElementById('count').textContent = text; }};
{script}
</script>{"<script>/* bundle */</script>" * 3}</body></html>"""


def array_buffers(limit_mb: int = HOG_LIMIT_MB) -> str:
    """ArrayBuffers live outside the script heap, so --max-old-space-size does not bound them."""
    return _hog(f"""const keep = []; let mb = 0;
function grow() {{
  for (let i = 0; i < 4 && mb < {limit_mb}; i++) {{
    const chunk = new Uint8Array(16 << 20); chunk.fill(1); keep.push(chunk); mb += 16;
  }}
  show(mb + ' MB');
  setTimeout(grow, 0);
}}
grow();""")


def workers(count: int = 4, limit_mb: int = HOG_LIMIT_MB) -> str:
    """Web Workers, each its own script heap (the heap cap applies to each), each filling it."""
    import json

    each = limit_mb // count
    worker = f"""const keep = []; let mb = 0;
function grow() {{
  for (let i = 0; i < 4 && mb < {each}; i++) {{
    const numbers = new Array(1 << 20); for (let j = 0; j < numbers.length; j++) numbers[j] = j + 0.5;
    keep.push(numbers); mb += 8;
  }}
  postMessage(mb);
  setTimeout(grow, 0);
}}
grow();"""
    return _hog(f"""const source = {json.dumps(worker)};
const url = URL.createObjectURL(new Blob([source], {{type: 'text/javascript'}}));
const sizes = [];
for (let n = 0; n < {count}; n++) {{
  const worker = new Worker(url);
  worker.onmessage = (event) => {{ sizes[n] = event.data; show(sizes.join(' + ') + ' MB'); }};
}}""")


def wasm_memory(limit_mb: int = HOG_LIMIT_MB) -> str:
    """One WebAssembly memory grown 16 MB at a time, every page of it written."""
    return _hog(f"""const memory = new WebAssembly.Memory({{initial: 1, maximum: 65536}});
let mb = 0;
function grow() {{
  for (let i = 0; i < 4 && mb < {limit_mb}; i++) {{
    const end = memory.buffer.byteLength;
    memory.grow(256);
    new Uint8Array(memory.buffer, end).fill(1);
    mb += 16;
  }}
  show(mb + ' MB');
  setTimeout(grow, 0);
}}
grow();""")


AWAY_TEXT = "This page sends its reader elsewhere, but its own text is what a reader came for."


def navigates_away(how: str, target: str) -> str:
    """A page whose main frame goes to target as soon as it loads: by a meta refresh, a script's
    location change, or a form it submits itself."""
    head = f'<meta http-equiv="refresh" content="0; url={target}">' if how == "meta-refresh" else ""
    script = {
        "meta-refresh": "",
        "location": f"<script>location.href = {target!r};</script>",
        "form": f"""<form id="go" method="post" action="{target}"><input name="q" value="1"></form>
<script>document.getElementById('go').submit();</script>""",
    }[how]
    return f"""<!doctype html><html><head><title>Leaving</title>{head}</head><body>
<article><h1>Before leaving</h1><p>{AWAY_TEXT}</p></article>{script}</body></html>"""


NEVER_YIELDS_TEXT = "Some text the download already has, before a script that never yields."


def never_yields() -> str:
    """A page whose script takes the main thread for good: nothing can be read from it."""
    return f"""<!doctype html><html><head><title>Busy</title></head><body>
<div id="app"><p>{NEVER_YIELDS_TEXT}</p></div><script>while (true) {{}}</script>
{"<script>/* bundle */</script>" * 3}</body></html>"""
