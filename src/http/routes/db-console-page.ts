import { randomBytes } from 'node:crypto';

/**
 * The database console page (`GET /v1/db-console#<token>`): it takes the single-use token from the
 * fragment, trades it for a session (kept in `sessionStorage`, sent as a header — never a cookie, so
 * no other site can make the browser run SQL), removes the token from the address bar, then runs one
 * statement at a time and shows the rows.
 */
export function consolePage(): { html: string; csp: string } {
  const nonce = randomBytes(16).toString('base64');
  const script = `
const out = document.getElementById('out');
const status = document.getElementById('status');
const form = document.getElementById('q');
const KEY = 'spaces-db-console';
function show(msg, bad) { status.textContent = msg; status.className = bad ? 'bad' : ''; }
async function post(path, body, session) {
  const headers = { 'content-type': 'application/json' };
  if (session) headers['x-spaces-console'] = session;
  const res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.detail || json.title || ('HTTP ' + res.status));
  return json.data;
}
function cell(v) {
  if (v === null) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
function render(r) {
  out.replaceChildren();
  if (!r.columns.length) { show(r.changes + ' row(s) changed in ' + r.duration + ' ms'); return; }
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const c of r.columns) { const th = document.createElement('th'); th.textContent = c; head.appendChild(th); }
  const body = table.createTBody();
  for (const row of r.rows) { const tr = body.insertRow(); for (const v of row) tr.insertCell().textContent = cell(v); }
  out.appendChild(table);
  show(r.rows.length + ' row(s)' + (r.truncated ? ' (first 1,000 shown)' : '') + ' in ' + r.duration + ' ms');
}
async function start() {
  const token = location.hash.slice(1);
  history.replaceState(null, '', location.pathname);
  if (token) {
    try {
      const s = await post('/v1/db-console/session', { token });
      sessionStorage.setItem(KEY, JSON.stringify(s));
    } catch (e) { sessionStorage.removeItem(KEY); show(e.message, true); return; }
  }
  const s = JSON.parse(sessionStorage.getItem(KEY) || 'null');
  if (!s) { show('This console link was used already or has run out. Ask for a new one: spaces db console', true); return; }
  document.getElementById('space').textContent = s.spaceId;
  form.hidden = false;
  show('Connected. The session ends at ' + new Date(s.expiresAt).toLocaleTimeString() + '.');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    show('Running…');
    try { render(await post('/v1/db-console/query', { sql: form.sql.value }, s.session)); }
    catch (e) { show(e.message, true); }
  });
}
start();
`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Database console</title>
<style nonce="${nonce}">
body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#111}
textarea{width:100%;font:13px ui-monospace,monospace;min-height:6rem}
table{border-collapse:collapse;margin-top:1rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;font:13px ui-monospace,monospace}
th{background:#f4f4f4}.bad{color:#b00020}#status{margin:.5rem 0}
</style></head>
<body><main>
<h1>Database console <small id="space"></small></h1>
<p>Full authority over this space's database: statements run as they are written, one at a time.</p>
<form id="q" hidden><label for="sql">SQL</label><textarea id="sql" name="sql" required>SELECT name FROM sqlite_schema WHERE type = 'table'</textarea>
<button type="submit">Run</button></form>
<p id="status" role="status" aria-live="polite"></p>
<div id="out"></div>
</main><script nonce="${nonce}">${script}</script></body></html>`;
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  return { html, csp };
}
