// Drives Debian's Chromium through the demo page, the web SDK and the
// hosted link flow, as a person would, at a desktop and a phone width, and
// saves a screenshot of each page. Run by cmd/hitch/browser_test.go, which
// starts Hitch and checks what the logins did; this script prints one JSON
// line per scenario on stdout.
//
// Environment: HITCH_URL, OUT_DIR (screenshots), RUN_ID (makes user ids
// unique), CLIENT_ID, EXPIRED_SESSION (a session that has expired) and
// EXPIRING_SESSION (one that expires within two minutes).
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const base = process.env.HITCH_URL;
const out = process.env.OUT_DIR;
const runID = process.env.RUN_ID;
// How long one step may wait. CI runs these beside every other package
// under the race detector, where on a slow 2-CPU VM a click can take over
// 15 s.
const timeout = 60000;

const viewports = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

// until polls fn until it returns true.
async function until(what, fn) {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function report(line) {
  process.stdout.write(JSON.stringify(line) + '\n');
}

// A fresh profile (--user-data-dir) every run: Playwright passes it for a
// persistent context.
const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hitch-chromium-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

try {
  for (const vp of viewports) {
    const page = await browser.newPage();
    await page.setViewportSize({ width: vp.width, height: vp.height });
    page.setDefaultTimeout(timeout);
    const consoleErrors = [];
    // The expired session's 400 is the one failed load expected.
    let failedLoadsExpected = false; // scenario 5 fakes failed calls
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/status of 400/.test(msg.text()) &&
        !(failedLoadsExpected && /status of (500|429)/.test(msg.text()))) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(String(err)));
    const shot = (name) => page.screenshot({ path: join(out, `${name}-${vp.name}.png`) });

    await page.goto(base + '/demo');
    await shot('demo');

    // 1. A person searches a merchant and logs in with user_good/pass_good.
    const okUser = `browser-${runID}-${vp.name}-ok`;
    await page.fill('#external-user-id', okUser);
    await page.selectOption('#type', 'transaction_link');
    await page.click('#open');
    let flow = page.frameLocator('iframe[data-hitch-link]');
    await flow.locator('#search').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelector('iframe[data-hitch-link]').style.visibility === 'visible');
    // The flow is modal: the page beneath is inert while it is open.
    if (!(await page.evaluate(() => [...document.body.children].filter((el) => el.tagName !== 'IFRAME').every((el) => el.inert)))) {
      throw new Error('the page beneath the open flow is not inert');
    }
    await flow.locator('#merchants li:not([hidden])').first().waitFor();
    await shot('merchants');
    await flow.locator('#search').fill('netfl');
    await until('the search to show Netflix alone', async () =>
      await flow.locator('#merchants li:not([hidden])').count() === 1 &&
      await flow.locator('#merchants li:not([hidden]) .name').textContent() === 'Netflix');
    await flow.locator('.merchant', { hasText: 'Netflix' }).click();
    await flow.locator('#username').waitFor({ state: 'visible' });
    const focused = await flow.locator('#username').evaluate((el) => el === document.activeElement);
    if (!focused) throw new Error('the login form does not focus the username');
    await flow.locator('#username').fill('user_good');
    await flow.locator('#password').fill('pass_good');
    await shot('login');
    await flow.locator('#login-submit').click();
    await flow.locator('#view-success').waitFor({ state: 'visible' });
    await shot('success');
    await page.locator('#log li[data-callback="onSuccess"]').waitFor();
    const okSession = await page.locator('#session-info').getAttribute('data-session-id');
    const okCallbacks = await page.locator('#log li').evaluateAll((lis) => lis.map((li) => {
      const args = JSON.parse(li.querySelector('pre').textContent);
      return li.dataset.callback + (args.event ? ' ' + args.event : '');
    }));
    await flow.locator('#success-done').click();
    await page.locator('#log li[data-callback="onExit"]').waitFor();
    if (await page.locator('iframe[data-hitch-link]').count() !== 0) throw new Error('the iframe is still there after close');
    if (await page.evaluate(() => [...document.body.children].some((el) => el.inert))) {
      throw new Error('the page is still inert after the flow closed');
    }
    report({ viewport: vp.name, scenario: 'success', externalUserId: okUser, sessionId: okSession, callbacks: okCallbacks.reverse() });

    // 2. The one-time code: 0000 is refused, 1234 accepted; by keyboard.
    const otpUser = `browser-${runID}-${vp.name}-otp`;
    await page.fill('#external-user-id', otpUser);
    await page.selectOption('#type', 'card_switcher');
    await page.click('#open');
    flow = page.frameLocator('iframe[data-hitch-link]');
    await flow.locator('#search').waitFor({ state: 'visible' });
    await flow.locator('#search').fill('amazon');
    await until('the search to show Amazon first', async () =>
      await flow.locator('#merchants li:not([hidden]) .name').first().textContent() === 'Amazon');
    await flow.locator('#merchants li:not([hidden]) .merchant').first().click();
    await flow.locator('#username').fill('user_good');
    await flow.locator('#password').fill('pass_otp');
    await flow.locator('#password').press('Enter');
    await flow.locator('#otp').waitFor({ state: 'visible' });
    await shot('otp');
    await flow.locator('#otp').fill('0000');
    await flow.locator('#otp').press('Enter');
    await flow.locator('#otp-error').waitFor({ state: 'visible' });
    const wrong = await flow.locator('#otp-error').textContent();
    if (!/not right/.test(wrong)) throw new Error(`wrong code message: ${wrong}`);
    await shot('otp-wrong');
    await flow.locator('#otp').fill('1234');
    await flow.locator('#otp').press('Enter');
    await flow.locator('#view-success').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelectorAll('#log li[data-callback="onSuccess"]').length === 2);
    const otpSession = await page.locator('#session-info').getAttribute('data-session-id');
    await flow.locator('#close').click();
    await page.locator('iframe[data-hitch-link]').waitFor({ state: 'detached' });
    report({ viewport: vp.name, scenario: 'otp', externalUserId: otpUser, sessionId: otpSession });

    // 3. An expired session: the flow says so and onError gets EXPIRED_SESSION.
    await page.evaluate(({ session, clientId }) => {
      window.expiredErrors = [];
      new window.HitchLink().open({
        sessionId: session, clientId, environment: 'development',
        onError: (e) => window.expiredErrors.push({ code: e.errorCode, message: e.errorDescription }),
      });
    }, { session: process.env.EXPIRED_SESSION, clientId: process.env.CLIENT_ID });
    flow = page.frameLocator('iframe[data-hitch-link]');
    await flow.locator('#view-error').waitFor({ state: 'visible' });
    await page.waitForFunction(() => window.expiredErrors.length > 0);
    const errors = await page.evaluate(() => window.expiredErrors);
    await shot('error');
    const title = await flow.locator('#h-error').textContent();
    await flow.locator('#error-close').click();
    await page.locator('iframe[data-hitch-link]').waitFor({ state: 'detached' });
    report({ viewport: vp.name, scenario: 'expired', errors, title });

    // 3b. The same in Spanish: init's locale picks the flow's language,
    // while the error the app receives stays English for its code. The
    // frame's URL names the developer, never the session.
    if (vp.name === 'desktop') {
      await page.evaluate(({ session, clientId }) => {
        window.spanishErrors = [];
        new window.HitchLink().open({
          sessionId: session, clientId, environment: 'development', locale: 'es-MX',
          onError: (e) => window.spanishErrors.push({ code: e.errorCode, message: e.errorDescription }),
        });
      }, { session: process.env.EXPIRED_SESSION, clientId: process.env.CLIENT_ID });
      flow = page.frameLocator('iframe[data-hitch-link]');
      await flow.locator('#view-error').waitFor({ state: 'visible' });
      await page.waitForFunction(() => window.spanishErrors.length > 0);
      const spanish = await flow.locator('#h-error').textContent();
      if (spanish.trim() !== 'Esta sesión caducó') throw new Error(`Spanish expiry title: ${spanish}`);
      const lang = await flow.locator('html').getAttribute('lang');
      if (lang !== 'es') throw new Error(`<html lang> in Spanish: ${lang}`);
      const [err] = await page.evaluate(() => window.spanishErrors);
      if (err.code !== 'EXPIRED_SESSION' || !/expired/.test(err.message)) {
        throw new Error(`the app's error in a Spanish flow: ${JSON.stringify(err)}`);
      }
      const src = await page.locator('iframe[data-hitch-link]').getAttribute('src');
      const srcURL = new URL(src, base);
      if (srcURL.searchParams.get('client_id') !== process.env.CLIENT_ID || src.includes(process.env.EXPIRED_SESSION)) {
        throw new Error(`the frame's URL: ${src}`);
      }
      await shot('error-es');
      await flow.locator('#error-close').click();
      await page.locator('iframe[data-hitch-link]').waitFor({ state: 'detached' });
    }

    // 4. A session about to expire: the flow asks the app to extend it.
    if (vp.name === 'desktop') {
      await page.evaluate(({ session, clientId }) => {
        window.refreshEvents = [];
        window.refreshLink = new window.HitchLink();
        window.refreshLink.open({
          sessionId: session, clientId, environment: 'development',
          onEvent: (e) => window.refreshEvents.push(e.event),
        });
      }, { session: process.env.EXPIRING_SESSION, clientId: process.env.CLIENT_ID });
      await page.waitForFunction(() => window.refreshEvents.includes('REFRESH_SESSION_REQUEST'));
      await page.evaluate(() => window.refreshLink.close());
      report({ viewport: vp.name, scenario: 'refresh' });
    }

    // 5. Errors the user can recover from, seen and heard: a failed search
    // keeps the list; a wrong security answer marks the field invalid and
    // describes it with the message; a rate-limited answer says so on screen.
    if (vp.name === 'desktop') {
      failedLoadsExpected = true;
      await page.fill('#external-user-id', `browser-${runID}-${vp.name}-a11y`);
      await page.selectOption('#type', 'transaction_link');
      await page.click('#open');
      flow = page.frameLocator('iframe[data-hitch-link]');
      await flow.locator('#merchants li:not([hidden])').first().waitFor();
      const listed = await flow.locator('#merchants li:not([hidden])').count();
      await browser.route('**/link/api/merchants', (route) => route.fulfill({ status: 500, contentType: 'application/json',
        body: JSON.stringify({ error_type: 'API_ERROR', error_code: 'INTERNAL_SERVER_ERROR', error_message: 'boom' }) }));
      await flow.locator('#search').fill('netfl');
      await flow.locator('#search-error').waitFor({ state: 'visible' });
      if (!(await flow.locator('#view-merchants').isVisible()) || await flow.locator('#merchants li:not([hidden])').count() !== listed) {
        throw new Error('a failed search did not keep the list');
      }
      if (await flow.locator('#search').getAttribute('aria-describedby') !== 'search-error') {
        throw new Error('the search error is not tied to the search field');
      }
      await browser.unroute('**/link/api/merchants');
      await flow.locator('.merchant', { hasText: 'Netflix' }).click();
      await flow.locator('#username').fill('user_good');
      await flow.locator('#password').fill('pass_questions');
      await flow.locator('#password').press('Enter');
      await flow.locator('#answer').waitFor({ state: 'visible' });
      await flow.locator('#answer').fill('wrong answer');
      await flow.locator('#answer').press('Enter');
      await flow.locator('#question-error').waitFor({ state: 'visible' });
      const a11y = await flow.locator('#answer').evaluate((el) => ({
        invalid: el.getAttribute('aria-invalid'), describedBy: el.getAttribute('aria-describedby'),
        error: document.getElementById(el.getAttribute('aria-describedby') || 'none')?.textContent || '',
      }));
      if (a11y.invalid !== 'true' || a11y.describedBy !== 'question-error' || !/not right/.test(a11y.error)) {
        throw new Error('the wrong answer is not marked on its field: ' + JSON.stringify(a11y));
      }
      await shot('question-wrong');
      await browser.route('**/link/api/answer', (route) => route.fulfill({ status: 429, contentType: 'application/json',
        headers: { 'Retry-After': '1' },
        body: JSON.stringify({ error_type: 'RATE_LIMIT_EXCEEDED', error_code: 'RATE_LIMIT_EXCEEDED', error_message: 'slow down' }) }));
      await flow.locator('#answer').fill('another');
      await flow.locator('#answer').press('Enter');
      await until('the rate limit to show', async () => /Too many tries/.test(await flow.locator('#question-error').textContent()));
      if (!(await flow.locator('#question-error').isVisible())) throw new Error('the rate limit message is not visible');
      await browser.unroute('**/link/api/answer');
      await flow.locator('#close').click();
      await page.locator('iframe[data-hitch-link]').waitFor({ state: 'detached' });
      failedLoadsExpected = false;
      report({ viewport: vp.name, scenario: 'recoverable' });
    }

    if (consoleErrors.length) throw new Error('console errors: ' + consoleErrors.join(' | '));
    await page.close();
  }
} finally {
  await browser.close();
}
