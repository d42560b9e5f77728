// Runs one developer page, written for knotapi-js 1.1.1, against the real
// knotapi-js from npm and against Hitch's /sdk/hitch.js, through the same
// scenarios, and prints every callback each SDK made. knotapi-js opens its
// flow at the root of a host it hard-codes (https://development-knotapi.vercel.app/
// for environment "development") and posts its analytics to another
// (https://development.knotapi.com/events): Chromium resolves both to
// PROXY_ADDR, a TLS reverse proxy in front of Hitch, as an operator's DNS
// and proxy would (docs/link.md). Run by cmd/hitch/sdk_browser_test.go
// (TestBrowserKnotapiJS), which compares the callbacks and checks the
// webhooks; this script prints one JSON object on stdout.
//
// Environment: PAGE_URL (the developer page; ?sdk=knotapi or ?sdk=hitch
// picks the script it loads), PROXY_ADDR (host:port), CLIENT_ID,
// SESSION_KNOTAPI and SESSION_HITCH (one transaction_link session each),
// EXPIRED_SESSION, SPARE_SESSION (a session opened but never used to log
// in), HITCH_URL, OUT_DIR (screenshots), CHROMIUM.
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FLOW_HOST = 'development-knotapi.vercel.app';
const EVENTS_HOST = 'development.knotapi.com';
const pageURL = process.env.PAGE_URL;
const clientId = process.env.CLIENT_ID;
const out = process.env.OUT_DIR;
// How long one step may wait: on a busy 2-CPU machine a click can take
// over 15 s.
const timeout = 60000;

function check(ok, what) {
  if (!ok) throw new Error(what);
}

const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hitch-chromium-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // The proxy's certificate is the test's own, not one for knotapi's names.
  ignoreHTTPSErrors: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--host-resolver-rules=MAP ${FLOW_HOST} ${process.env.PROXY_ADDR}, MAP ${EVENTS_HOST} ${process.env.PROXY_ADDR}`],
});

// waitForCall waits until the page has recorded a call of cb.
async function waitForCall(page, cb) {
  await page.waitForFunction((cb) => window.calls.some((c) => c.cb === cb), cb);
}

// The scenarios: what the page opens, and what the person does in the flow.
const scenarios = [
  {
    // Search, pick Netflix, log in, a wrong code then the right one, Done.
    name: 'link',
    config: (sdk) => ({ sessionId: process.env[sdk === 'knotapi' ? 'SESSION_KNOTAPI' : 'SESSION_HITCH'],
      entryPoint: 'knot-page', metadata: { source: 'page', campaign: 'spring' } }),
    async run(page, flow, shot) {
      await flow.locator('#merchants li:not([hidden])').first().waitFor();
      await shot('merchants');
      await flow.locator('#search').fill('netfl');
      // The list is redrawn when the server's answer to the search comes:
      // a click before that may land on a merchant moving away.
      await flow.locator('#merchants li:not([hidden])').first().filter({ hasText: 'Netflix' }).waitFor();
      await flow.locator('.merchant', { hasText: 'Netflix' }).click();
      await flow.locator('#username').fill('user_good_transactions');
      await flow.locator('#password').fill('pass_otp');
      await flow.locator('#login-submit').click();
      await flow.locator('#otp').waitFor({ state: 'visible' });
      await flow.locator('#otp').fill('0000');
      await flow.locator('#otp').press('Enter');
      await flow.locator('#otp-error').waitFor({ state: 'visible' });
      await flow.locator('#otp').fill('1234');
      await flow.locator('#otp').press('Enter');
      await flow.locator('#view-success').waitFor({ state: 'visible' });
      await waitForCall(page, 'onSuccess');
      await shot('success');
      await flow.locator('#success-done').click();
      await waitForCall(page, 'onExit');
    },
  },
  { name: 'expired', config: () => ({ sessionId: process.env.EXPIRED_SESSION }), run: closeOnError },
  { name: 'unknown-session', config: () => ({ sessionId: 'sess_' + 'Q'.repeat(43) }), run: closeOnError },
  { name: 'unknown-client', config: () => ({ sessionId: process.env.SPARE_SESSION, clientId: 'no_such_client' }), run: closeOnError },
  { name: 'no-merchant', config: () => ({ sessionId: process.env.SPARE_SESSION, merchantIds: [999999] }), run: closeOnError },
  // The same with a browser that does not send Sec-Fetch-Dest (Safari
  // before 16.4): its frame gets the landing page at the root, whose
  // script sends it on to the flow. knotapi-js only: hitch.js opens /link.
  { name: 'no-fetch-dest', knotapiOnly: true, withoutFetchDest: true,
    config: () => ({ sessionId: process.env.SPARE_SESSION, merchantIds: [999999] }), run: closeOnError },
];

// closeOnError waits for the flow's error screen and onError, and closes.
async function closeOnError(page, flow, shot) {
  await flow.locator('#view-error').waitFor({ state: 'visible' });
  await waitForCall(page, 'onError');
  await shot('error');
  await flow.locator('#error-close').click();
  await waitForCall(page, 'onExit');
}

const results = { calls: { knotapi: {}, hitch: {} }, flowDocuments: [], events: [] };
try {
  for (const sdk of ['knotapi', 'hitch']) {
    for (const sc of scenarios.filter((sc) => sdk === 'knotapi' || !sc.knotapiOnly)) {
      // A page per scenario: knotapi-js never removes its message
      // listener, so a second open in one page would call both configs.
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.setDefaultTimeout(timeout);
      const problems = [];
      page.on('console', (msg) => {
        // An error scenario's failed call is the one expected failed load.
        if (msg.type() === 'error' && !(sc.name !== 'link' && /status of 40[04]/.test(msg.text()))) problems.push(msg.text());
      });
      page.on('pageerror', (err) => problems.push(String(err)));
      if (sdk === 'knotapi') {
        page.on('request', (req) => {
          const u = new URL(req.url());
          if (u.host === FLOW_HOST && req.resourceType() === 'document') results.flowDocuments.push({ scenario: sc.name, url: req.url() });
        });
        page.on('response', async (resp) => {
          const u = new URL(resp.url());
          if (u.host !== EVENTS_HOST || resp.request().method() !== 'POST') return;
          const body = resp.request().postDataJSON();
          results.events.push({ scenario: sc.name, path: u.pathname, status: resp.status(), type: body.type,
            event: body.event && body.event.event, cors: resp.headers()['access-control-allow-origin'] || '' });
        });
      }
      const shot = (name) => page.screenshot({ path: join(out, `knotapi-${sdk}-${sc.name}-${name}.png`) });
      if (sc.withoutFetchDest) {
        // Playwright fetches the root from Hitch itself, with the
        // browser's headers but Sec-Fetch-Dest.
        await page.route(`https://${FLOW_HOST}/`, async (route) => {
          const headers = Object.fromEntries(Object.entries(route.request().headers()).filter(([k]) => k !== 'sec-fetch-dest'));
          await route.fulfill({ response: await route.fetch({ url: process.env.HITCH_URL + '/', headers }) });
        });
      }

      await page.goto(pageURL + '?sdk=' + sdk);
      await page.waitForFunction(() => typeof window.openFlow === 'function');
      await page.evaluate((config) => window.openFlow(config),
        Object.assign({ clientId, environment: 'development' }, sc.config(sdk)));
      const flow = page.frameLocator(sdk === 'knotapi' ? '#knotapi-iframe' : 'iframe[data-hitch-link]');
      try {
        await sc.run(page, flow, shot);
      } catch (err) {
        await shot('failed').catch(() => {});
        throw new Error(`${sdk} ${sc.name}: ${err.message}; calls so far ${JSON.stringify(await page.evaluate(() => window.calls))}`);
      }
      // What knotapi-js does after close (its analytics) has settled when
      // the frame is gone.
      await page.waitForFunction(() => !document.querySelector('#knotapi-iframe, iframe[data-hitch-link]'));
      results.calls[sdk][sc.name] = await page.evaluate(() => window.calls);
      check(problems.length === 0, `${sdk} ${sc.name}: console errors: ${problems.join(' | ')}`);
      await page.close();
    }
  }
  process.stdout.write(JSON.stringify(results) + '\n');
} finally {
  await browser.close();
}
