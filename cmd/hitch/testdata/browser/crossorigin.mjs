// Drives Debian's Chromium through the web SDK embedded in a developer's own
// page on another origin than Hitch, as a real app embeds it: the page
// loads <hitch>/sdk/hitch.js and opens the flow for a session its server
// created. Besides the login, it checks that the messages between the page
// and the flow go only where they should and are taken only from whom they
// should: forged messages from the page itself, from another Hitch frame,
// from the SDK's frame navigated elsewhere, and a second init into the flow
// are all ignored. Run by
// cmd/hitch/browser_test.go (TestBrowserLinkCrossOrigin), which checks the
// linked account; this script prints one JSON line on stdout.
//
// Environment: HITCH_URL, PAGE_URL (the developer page), OUT_DIR
// (screenshots), CHROMIUM.
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const hitchOrigin = new URL(process.env.HITCH_URL).origin;
const pageURL = process.env.PAGE_URL;
const pageOrigin = new URL(pageURL).origin;
const out = process.env.OUT_DIR;
// How long one step may wait. CI runs these beside every other package
// under the race detector, where on a slow 2-CPU VM a click can take over
// 15 s.
const timeout = 60000;

function check(ok, what) {
  if (!ok) throw new Error(what);
}

// until polls fn until it returns true.
async function until(what, fn) {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hitch-chromium-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

try {
  check(hitchOrigin !== pageOrigin, `the developer page (${pageOrigin}) must be on another origin than Hitch`);
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1280, height: 800 });
  page.setDefaultTimeout(timeout);
  const consoleErrors = [];
  page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(msg.text()); });
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  const shot = (name) => page.screenshot({ path: join(out, `crossorigin-${name}.png`) });

  await page.goto(pageURL);
  await page.waitForFunction(() => typeof window.HitchLink === 'function');
  await page.click('#open');
  const flow = page.frameLocator('iframe[data-hitch-link]');
  await flow.locator('#merchants li:not([hidden])').first().waitFor();
  await page.waitForFunction(() => document.querySelector('iframe[data-hitch-link]').style.visibility === 'visible');
  await shot('merchants');

  // The flow runs on Hitch's origin, not the page's.
  const frame = await (await page.locator('iframe[data-hitch-link]').elementHandle()).contentFrame();
  const frameOrigin = new URL(frame.url()).origin;
  check(frameOrigin === hitchOrigin && frameOrigin !== new URL(page.url()).origin,
    `the flow's origin is ${frameOrigin}, the page's ${new URL(page.url()).origin}, Hitch's ${hitchOrigin}`);
  const fromHitch = (name) => page.evaluate(({ name, hitchOrigin }) =>
    window.messages.filter((m) => m.origin === hitchOrigin && m.name === name).length, { name, hitchOrigin });
  check(await fromHitch('loadingFinished') === 1, 'loadingFinished came ' + await fromHitch('loadingFinished') + ' times');

  // (b) A second init, forged by the page after the real one, is ignored:
  // the flow would otherwise hide its search (useSearch: false) at once and
  // fail with the bogus session. A listener added after the flow's own runs
  // after it for the same message, so once it has seen the forgery the
  // flow has handled it.
  await frame.evaluate(() => {
    window.initsSeen = 0;
    window.addEventListener('message', (e) => { if (e.data && e.data.event === 'init') window.initsSeen++; });
  });
  await page.evaluate(() => document.querySelector('iframe[data-hitch-link]').contentWindow.postMessage({
    event: 'init', payload: { sessionId: 'sess_forged', clientId: 'forged', environment: 'development', useSearch: false },
  }, '*'));
  await frame.waitForFunction(() => window.initsSeen === 1);
  check(await flow.locator('#view-merchants').isVisible() && await flow.locator('#search-box').isVisible(),
    'the flow acted on a forged second init');

  // From now on, note where the flow addresses each message to its parent
  // (window.parent is [Replaceable]; the init is in, so the flow uses it
  // only to post; this goes in after the forged init below, which must
  // come from the real parent). Every message must name the page's origin, the one
  // that sent init: not '*', not the flow's own origin.
  await frame.evaluate(() => {
    const parent = window.parent;
    window.targetOrigins = [];
    window.parent = { postMessage: (msg, targetOrigin) => { window.targetOrigins.push(targetOrigin); parent.postMessage(msg, targetOrigin); } };
  });

  // The login, inside the flow.
  await flow.locator('#search').fill('netfl');
  // The list is redrawn when the server's answer to the search comes:
  // a click before that may land on a merchant moving away.
  await flow.locator('#merchants li:not([hidden])').first().filter({ hasText: 'Netflix' }).waitFor();
  await flow.locator('.merchant', { hasText: 'Netflix' }).click();
  await flow.locator('#username').fill('user_good');
  await flow.locator('#password').fill('pass_good');
  await flow.locator('#login-submit').click();
  await flow.locator('#view-success').waitFor({ state: 'visible' });
  await page.waitForFunction(() => window.calls.some((c) => c.cb === 'onSuccess'));
  await shot('success');
  const success = await page.evaluate(() => window.calls.filter((c) => c.cb === 'onSuccess'));
  check(success.length === 1 && success[0].product === 'transaction_link' && success[0].details.merchant === 'Netflix' &&
    success[0].details.merchantId === 4, 'onSuccess got ' + JSON.stringify(success));

  // (a) A success message the page posts to itself is not the flow's, and
  // (c) neither is one from another frame on Hitch's origin. A page
  // listener added after the SDK's runs after it for the same message;
  // once it has seen both forgeries, the SDK has handled them (it calls
  // the page's callbacks from its own listener, hitch.js onMessage).
  await page.evaluate(({ hitchURL }) => {
    window.forgedSeen = 0;
    window.addEventListener('message', (e) => {
      if (e.data && e.data.name === 'success' && /^(Fake|Decoy)$/.test(e.data.eventProperties.merchant)) window.forgedSeen++;
    });
    const decoy = document.createElement('iframe');
    decoy.id = 'decoy';
    decoy.src = hitchURL + '/link';
    decoy.style.display = 'none';
    document.body.appendChild(decoy);
    window.postMessage({ name: 'success', eventProperties: { merchant: 'Fake', product: 'link' } }, '*');
  }, { hitchURL: process.env.HITCH_URL });
  const decoy = await (await page.locator('#decoy').elementHandle()).contentFrame();
  await decoy.waitForLoadState();
  check(new URL(decoy.url()).origin === hitchOrigin, 'the decoy frame is not on Hitch\'s origin: ' + decoy.url());
  await decoy.evaluate(() => window.parent.postMessage({ name: 'success', eventProperties: { merchant: 'Decoy', product: 'link' } }, '*'));
  await page.waitForFunction(() => window.forgedSeen === 2);
  const after = await page.evaluate(() => window.calls.filter((c) => c.cb === 'onSuccess' || c.cb === 'onError'));
  check(after.length === 1, 'forged messages reached the callbacks: ' + JSON.stringify(after));
  await page.evaluate(() => document.getElementById('decoy').remove());

  // Every message since the spy went in (events, success) named the
  // page's origin.
  const targetOrigins = await frame.evaluate(() => window.targetOrigins);
  check(targetOrigins.length >= 4 && targetOrigins.every((o) => o === pageOrigin),
    `the flow addressed its messages to ${JSON.stringify(targetOrigins)}, want ${pageOrigin} only`);

  await flow.locator('#success-done').click();
  await page.waitForFunction(() => window.calls.some((c) => c.cb === 'onExit'));
  await page.locator('iframe[data-hitch-link]').waitFor({ state: 'detached' });

  // Nothing the forged init could have caused: no error, one
  // loadingFinished.
  const calls = await page.evaluate(() => window.calls.map((c) => c.cb + (c.event ? ' ' + c.event : '')));
  check(await fromHitch('error') === 0 && await fromHitch('loadingFinished') === 1,
    `messages from the flow: ${await fromHitch('error')} errors, ${await fromHitch('loadingFinished')} loadingFinished`);

  // (d) The SDK's frame navigated elsewhere (here: to the page's origin)
  // is still its frame, but no longer the flow: a success from it is
  // ignored. Opened again for the purpose, and closed by the page.
  await page.click('#open');
  const reopened = page.locator('iframe[data-hitch-link]');
  // Once the flow has answered its init (navigating while its first load
  // commits may leave it in place).
  await page.waitForFunction((hitchOrigin) => window.messages.filter((m) => m.origin === hitchOrigin &&
    (m.name === 'loadingFinished' || m.name === 'error')).length === 2, hitchOrigin);
  await page.evaluate(({ pageOrigin }) => {
    // Added after the reopened SDK's listener, so it runs after it.
    window.awaySeen = 0;
    window.addEventListener('message', (e) => {
      if (e.data && e.data.name === 'success' && e.data.eventProperties.merchant === 'Away') window.awaySeen++;
    });
    document.querySelector('iframe[data-hitch-link]').src = pageOrigin + '/elsewhere';
  }, { pageOrigin });
  // The navigation may swap the frame into another process, and so
  // Playwright's frame object: ask for it again until it is there.
  let away = null;
  await until('the frame to be elsewhere', async () => {
    away = await (await reopened.elementHandle()).contentFrame();
    return away !== null && away.url() === pageOrigin + '/elsewhere';
  }).catch(async (err) => {
    throw new Error(err.message + ': frame at ' + (away && away.url()) + '; frames ' + page.frames().map((f) => f.url()).join(' ') +
      '; src ' + await page.evaluate(() => document.querySelector('iframe[data-hitch-link]')?.src));
  });
  await away.waitForLoadState();
  await away.evaluate(() => window.parent.postMessage({ name: 'success', eventProperties: { merchant: 'Away', product: 'link' } }, '*'));
  await page.waitForFunction(() => window.awaySeen === 1);
  const afterAway = await page.evaluate(() => window.calls.filter((c) => c.cb === 'onSuccess').length);
  check(afterAway === 1, `a success from the navigated frame reached onSuccess (${afterAway} calls)`);
  await page.evaluate(() => window.link.close());
  await reopened.waitFor({ state: 'detached' });

  process.stdout.write(JSON.stringify({ frameOrigin, pageOrigin, targetOrigins, calls, success: success[0] }) + '\n');
  if (consoleErrors.length) throw new Error('console errors: ' + consoleErrors.join(' | '));
  await page.close();
} finally {
  await browser.close();
}
