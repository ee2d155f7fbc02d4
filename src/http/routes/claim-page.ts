/**
 * The claim page. The space key travels in the URL fragment (`/claim#sfc_…`), which browsers never
 * send to servers, so it stays out of logs; the page reads it, drops it from the address bar, and
 * talks to the API with it. Everything is inline (strict CSP, no third-party assets).
 */
export function claimPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Claim your space — Spaces</title>
<style>
  :root { color-scheme: light dark; --fg:#1b1f24; --muted:#57606a; --bg:#f6f8fa; --card:#fff; --accent:#0969da; --ok:#1a7f37; --bad:#cf222e; }
  @media (prefers-color-scheme: dark) { :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117; --card:#161b22; --accent:#4493f8; } }
  body { margin:0; font:16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
  main { max-width: 34rem; margin: 3rem auto; padding: 0 1rem; }
  .card { background:var(--card); border-radius:12px; padding:1.5rem; box-shadow:0 1px 3px rgba(0,0,0,.12); margin-bottom:1rem; }
  .thumb { height:9rem; border-radius:8px; background:linear-gradient(135deg,#8ec5fc,#e0c3fc); display:flex; align-items:center; justify-content:center; font-size:2.5rem; color:#fff; margin-bottom:1rem; }
  h1 { font-size:1.5rem; margin:.2rem 0 1rem; } h2 { font-size:1.1rem; margin:0 0 .75rem; }
  label { display:block; font-weight:600; margin:.75rem 0 .25rem; }
  input, select { width:100%; box-sizing:border-box; padding:.55rem .6rem; border:1px solid var(--muted); border-radius:6px; font:inherit; background:transparent; color:inherit; }
  button { margin-top:1rem; padding:.6rem 1.1rem; border:0; border-radius:6px; background:var(--accent); color:#fff; font:inherit; font-weight:600; cursor:pointer; }
  button:focus-visible, input:focus-visible, select:focus-visible { outline:3px solid var(--accent); outline-offset:2px; }
  .muted { color:var(--muted); } .error { color:var(--bad); } .ok { color:var(--ok); }
  [hidden] { display:none !important; }
  label.check { display:flex; gap:.5rem; align-items:center; font-weight:400; } label.check input { width:auto; }
  a { color:var(--accent); }
</style>
</head>
<body>
<main>
  <p class="muted">Spaces</p>
  <h1>Claim your space</h1>
  <div class="card" id="space-card" aria-live="polite">
    <div class="thumb" aria-hidden="true">✦</div>
    <p id="loading">Looking up your space…</p>
    <div id="space" hidden>
      <h2 id="space-title"></h2>
      <p><a id="space-url" href="#" rel="noopener"></a></p>
      <p id="time-left"></p>
    </div>
    <p id="space-error" class="error" role="alert" hidden></p>
  </div>

  <div class="card" id="signin" hidden>
    <h2>Sign in to keep it</h2>
    <form id="signin-form">
      <label for="email">E-mail</label>
      <input id="email" name="email" type="email" autocomplete="username" required>
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
      <button type="submit">Sign in</button>
      <p id="signin-error" class="error" role="alert" hidden></p>
    </form>
    <details id="signup" hidden>
      <summary>No account yet? Sign up</summary>
      <form id="signup-form">
        <label for="su-name">Name</label>
        <input id="su-name" name="name" autocomplete="name" required>
        <label for="su-email">E-mail</label>
        <input id="su-email" name="email" type="email" autocomplete="username" required>
        <label for="su-password">Password (10+ characters)</label>
        <input id="su-password" name="password" type="password" autocomplete="new-password" minlength="10" required>
        <button type="submit">Sign up and continue</button>
        <p id="signup-error" class="error" role="alert" hidden></p>
      </form>
    </details>
  </div>

  <div class="card" id="choose" hidden>
    <h2>Choose a team</h2>
    <form id="claim-form">
      <label for="team">Team</label>
      <select id="team" name="team"></select>
      <label class="check"><input id="continuation" type="checkbox"> Let whoever published it keep publishing to it</label>
      <p class="muted">The space key then works once more: it can be traded for a publish key for this space only, which is yours and which you can revoke with your API keys.</p>
      <button type="submit">Claim space</button>
      <p id="claim-error" class="error" role="alert" hidden></p>
    </form>
  </div>

  <div class="card" id="done" hidden>
    <h2 class="ok">Claimed</h2>
    <p>The space is now in team <strong id="done-team"></strong> and stays online. Its old key no longer works.</p>
    <p><a id="done-url" href="#">Open the site</a></p>
  </div>
</main>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const key = decodeURIComponent(location.hash.slice(1));
  if (location.hash) history.replaceState(null, '', location.pathname);
  let session = sessionStorage.getItem('spaces_session');
  const api = async (method, path, token, body) => {
    const res = await fetch(path, {
      method,
      headers: Object.assign({ accept: 'application/json' }, token ? { authorization: 'Bearer ' + token } : {}, body ? { 'content-type': 'application/json' } : {}),
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = res.status === 204 ? null : await res.json().catch(() => null);
    if (!res.ok) throw Object.assign(new Error((data && data.detail) || ('HTTP ' + res.status)), { problem: data });
    return data;
  };
  const show = (id, on = true) => { $(id).hidden = !on; };
  const fail = (id, err) => { $(id).textContent = err.message; show(id); };
  const fmt = (s) => { const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60); return h ? h + ' h ' + m + ' min' : m + ' min'; };

  async function loadTeams() {
    const me = await api('GET', '/v1/account', session);
    const sel = $('team');
    sel.textContent = '';
    for (const t of me.data.teams) {
      const o = document.createElement('option');
      o.value = t.id; o.textContent = t.name + ' (' + t.slug + ')';
      sel.appendChild(o);
    }
    show('signin', false); show('choose');
  }

  async function start() {
    if (!/^sfc_/.test(key)) { show('loading', false); fail('space-error', new Error('This link has no space key. Open the claim link you were given.')); return; }
    try {
      const st = (await api('POST', '/v1/claim/visit', key)).data;
      show('loading', false); show('space');
      $('space-title').textContent = st.title;
      $('space-url').textContent = st.liveUrl; $('space-url').href = st.liveUrl;
      $('time-left').textContent = st.expired
        ? 'This space has expired and is offline. Claim it before ' + new Date(st.purgeAfter).toLocaleString() + ' to bring it back.'
        : 'Time left to claim: ' + fmt(st.secondsLeft) + '.';
      show('signup', st.signupOpen);
      if (session) { try { await loadTeams(); return; } catch { session = null; sessionStorage.removeItem('spaces_session'); } }
      show('signin');
    } catch (err) { show('loading', false); fail('space-error', err); }
  }

  async function signIn(email, password) {
    const s = await api('POST', '/v1/account/sessions', null, { email, password });
    session = s.data.token; sessionStorage.setItem('spaces_session', session);
    await loadTeams();
  }

  $('signin-form').addEventListener('submit', async (e) => {
    e.preventDefault(); show('signin-error', false);
    try { await signIn($('email').value, $('password').value); } catch (err) { fail('signin-error', err); }
  });
  $('signup-form').addEventListener('submit', async (e) => {
    e.preventDefault(); show('signup-error', false);
    try {
      await api('POST', '/v1/account', null, { name: $('su-name').value, email: $('su-email').value, password: $('su-password').value });
      await signIn($('su-email').value, $('su-password').value);
    } catch (err) { fail('signup-error', err); }
  });
  $('claim-form').addEventListener('submit', async (e) => {
    e.preventDefault(); show('claim-error', false);
    try {
      const res = await api('POST', '/v1/claim', session, { key, team: $('team').value, allowContinuation: $('continuation').checked });
      $('done-team').textContent = $('team').selectedOptions[0].textContent;
      $('done-url').href = res.data.space.liveUrl;
      $('time-left').textContent = 'Claimed: it no longer expires.';
      show('choose', false); show('done');
    } catch (err) { fail('claim-error', err); }
  });
  start();
})();
</script>
</body>
</html>`;
}
