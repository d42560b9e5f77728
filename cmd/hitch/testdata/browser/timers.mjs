// Drives Debian's Chromium through the hosted link flow to its end screens
// and waits past the session's expiry, to see that the flow's session
// timers stopped there: no expiry screen replaces the end screen, no
// further callback reaches the page, no session check is made. Each flow is
// opened by the web SDK in the demo page, in a tab of its own, all at once:
//
//   success  user_good / pass_good: the success screen;
//   failure  a locked account (password "account"): the failure screen,
//            which offers no retry;
//   error    the login call fails (a 500): the error screen;
//   refresh  user_good / pass_good with a session whose extension request
//            is still to come: the success screen;
//   race     the expiry check is in flight when the login succeeds, and
//            answers that the session expired (the server's answer for an
//            expired session): the flow has ended, so the answer must
//            change nothing.
//
// The first three use sessions that expire 40 seconds after they were
// made, as their flows open, and refresh one that asks for an extension 40
// seconds after; the script waits until each flow's own timer would have
// been due, and a little more. The race fakes only the time left (so that
// its check is due two seconds later) and holds the check until the flow
// ended. Run by cmd/hitch/browser_timers_test.go
// (TestBrowserLinkEndStopsTimers), which checks the results; prints one
// JSON line per scenario.
//
// Environment: HITCH_URL, CLIENT_ID, SESSIONS_URL (POST ?in=<Go duration>
// answers a session that expires that long from now), OUT_DIR, CHROMIUM.
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const base = process.env.HITCH_URL;
const clientId = process.env.CLIENT_ID;
const out = process.env.OUT_DIR;
// How long one step may wait. CI runs these beside every other package
// under the race detector, where on a slow 2-CPU VM a click can take over
// 15 s.
const timeout = 60000;
// How long past a flow's timer the script looks again. This wait is the
// test's subject: it checks that nothing happens once the timers are due,
// which no event announces.
const margin = 3000;

// Seconds: long enough to open a flow and log in on a busy machine (15
// was not: under CI's load one session expired before its login).
const lifetime = 40;
// link.js REFRESH_LEAD: seconds before expiry at which the flow asks the
// app to extend the session.
const refreshLead = 120;

// session returns a new session that expires in (a Go duration) from now.
async function session(expiresIn) {
  const resp = await fetch(process.env.SESSIONS_URL + '?in=' + encodeURIComponent(expiresIn), { method: 'POST' });
  const body = await resp.text();
  if (!resp.ok) throw new Error(`a session expiring in ${expiresIn}: ${resp.status} ${body}`);
  return body;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// open loads the demo page in a new tab and opens the flow for a new
// session that expires in expiresIn, noting every callback the page gets
// and every session call the flow makes. before runs first (to set up
// routes).
async function open(name, expiresIn, before) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(timeout);
  const tab = { name, page, problems: [], sessionCalls: [] };
  page.on('pageerror', (err) => tab.problems.push(String(err)));
  page.on('request', (req) => {
    if (new URL(req.url()).pathname === '/link/api/session') tab.sessionCalls.push(Date.now());
  });
  if (before) await before(tab);
  await page.goto(base + '/demo');
  const value = await session(expiresIn);
  const started = page.waitForResponse((r) => new URL(r.url()).pathname === '/link/api/session');
  await page.evaluate(({ value, clientId }) => {
    window.calls = [];
    window.link = new window.HitchLink();
    window.link.open({
      sessionId: value, clientId, environment: 'development',
      onSuccess: () => window.calls.push({ cb: 'onSuccess' }),
      onError: (e) => window.calls.push({ cb: 'onError', code: e.errorCode, message: e.errorDescription }),
      onEvent: (e) => window.calls.push({ cb: 'onEvent', event: e.event }),
      onExit: () => window.calls.push({ cb: 'onExit' }),
    });
  }, { value, clientId });
  const first = await (await started).json();
  if (typeof first.expires_in !== 'number') throw new Error(`${name}: the session call answered ${JSON.stringify(first)}`);
  // The flow asks for an extension refreshLead seconds before the expiry
  // it was told, and checks the session a second after it; the script
  // looks again after the later of these within its reach.
  tab.expiresIn = first.expires_in;
  tab.due = Date.now() + (first.expires_in > refreshLead ? first.expires_in - refreshLead : first.expires_in + 1) * 1000;
  tab.flow = page.frameLocator('iframe[data-hitch-link]');
  return tab;
}

// login logs in to Netflix in the tab's flow with password, and waits for
// an end screen.
async function login(tab, password) {
  const flow = tab.flow;
  await flow.locator('.merchant', { hasText: 'Netflix' }).click();
  await flow.locator('#username').fill('user_good');
  await flow.locator('#password').fill(password);
  await flow.locator('#login-submit').click();
  await flow.locator('#view-success:visible, #view-failure:visible, #view-error:visible').waitFor();
}

// screen is the flow's visible end screen (success, failure, error, or
// "" for none) and the error screen's title.
async function screen(tab) {
  const frame = await (await tab.page.locator('iframe[data-hitch-link]').elementHandle()).contentFrame();
  return frame.evaluate(() => ({
    view: ['success', 'failure', 'error'].find((v) => !document.getElementById('view-' + v).hidden) || '',
    title: document.getElementById('h-error').textContent,
  }));
}

// ended notes the end: the screen, and how many callbacks and session
// calls there were.
async function ended(tab) {
  const s = await screen(tab);
  tab.endView = s.view;
  tab.endTitle = s.title;
  tab.callsAtEnd = await tab.page.evaluate(() => window.calls.length);
  tab.sessionCallsAtEnd = tab.sessionCalls.length;
  await tab.page.screenshot({ path: join(out, `timers-${tab.name}-end.png`) });
}

// finish logs in to the tab's flow with password and notes the end.
async function finish(tab, password) {
  await login(tab, password);
  // The success message is posted with the screen; it is part of the end.
  if ((await screen(tab)).view === 'success') {
    await tab.page.waitForFunction(() => window.calls.some((c) => c.cb === 'onSuccess'));
  }
  await ended(tab);
  return tab;
}

// race opens a flow whose first session call says one second is left, so
// that its check is due two seconds later; holds the check until the login
// has succeeded; then answers it as the server answers an expired session.
async function race() {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const tab = await open('race', '30m', async (tab) => {
    let calls = 0;
    await tab.page.route('**/link/api/session', async (route) => {
      if (++calls === 1) {
        const resp = await route.fetch();
        return route.fulfill({ response: resp, json: { ...(await resp.json()), expires_in: 1 } });
      }
      release(route);
    });
  });
  const check = await held;
  await finish(tab, 'pass_good');
  const expired = await check.fetch({ postData: JSON.stringify({ session: await session('-1m'), client_id: clientId }) });
  if (expired.status() !== 400) throw new Error(`the expired session's check answered ${expired.status()}`);
  await check.fulfill({ response: expired });
  return tab;
}

try {
  // At once: the sessions are running out.
  const tabs = await Promise.all([
    open('success', lifetime + 's').then((tab) => finish(tab, 'pass_good')),
    open('failure', lifetime + 's').then((tab) => finish(tab, 'account')),
    open('error', lifetime + 's', (tab) => tab.page.route('**/link/api/login', (route) => route.fulfill({
      status: 500, contentType: 'application/json',
      body: JSON.stringify({ error_type: 'API_ERROR', error_code: 'INTERNAL_SERVER_ERROR', error_message: 'boom' }),
    }))).then((tab) => finish(tab, 'pass_good')),
    open('refresh', refreshLead + lifetime + 's').then((tab) => finish(tab, 'pass_good')),
    race(),
  ]);

  // Past every flow's expiry check, look again.
  await sleep(Math.max(...tabs.map((t) => t.due)) + margin - Date.now());
  for (const tab of tabs) {
    const now = await screen(tab);
    const calls = await tab.page.evaluate(() => window.calls);
    await tab.page.screenshot({ path: join(out, `timers-${tab.name}-later.png`) });
    process.stdout.write(JSON.stringify({
      scenario: tab.name, expiresIn: tab.expiresIn, lookedAfterDueMs: Date.now() - tab.due,
      endView: tab.endView, endTitle: tab.endTitle, view: now.view, title: now.title,
      callbacks: calls.slice(0, tab.callsAtEnd), later: calls.slice(tab.callsAtEnd),
      laterSessionCalls: tab.sessionCalls.length - tab.sessionCallsAtEnd, problems: tab.problems,
    }) + '\n');
  }
} finally {
  await browser.close();
}
