// Drives Debian's Chromium through the hosted flow of a production Hitch
// whose logins a connector completes at the reference shop: a developer's
// page (https, an allowed origin) opens the web SDK for each session of
// FLOWS, the user picks the shop, types credentials and, when the shop asks,
// the code it e-mailed (read from the shop's test mailbox) or the answer to
// its security question. Run by cmd/hitch/production_test.go, which checks
// what the logins did; prints one JSON line: one result per flow, with the
// time from submitting the credentials to the success screen (the OTP wait
// excluded).
//
// Environment: PAGE_URL (the developer page; ?session= is added), SHOP_URL,
// FLOWS (JSON: [{session, username, password, otp, answer, expect}]),
// OUT_DIR (screenshots), CHROMIUM.
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const timeout = 60000;
const flows = JSON.parse(process.env.FLOWS);
const out = process.env.OUT_DIR;

const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hitch-chromium-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  ignoreHTTPSErrors: true, // the developer page's certificate is the test's own
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// latestCode reads the newest code the shop e-mailed to address.
async function latestCode(address, after) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const html = await (await fetch(process.env.SHOP_URL + '/mailbox?to=' + encodeURIComponent(address))).text();
    const codes = [...html.matchAll(/\b(\d{6})\b/g)].map((m) => m[1]);
    if (codes.length > 0 && codes[0] !== after) return codes[0];
    if (Date.now() > deadline) throw new Error('no code e-mailed to ' + address);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const results = [];
try {
  for (const [i, f] of flows.entries()) {
    const page = await browser.newPage();
    page.setDefaultTimeout(timeout);
    const shot = (name) => page.screenshot({ path: join(out, `production-${i}-${name}.png`) });
    await page.goto(process.env.PAGE_URL + '?session=' + encodeURIComponent(f.session));
    await page.waitForFunction(() => typeof window.HitchLink === 'function');
    await page.click('#open');
    const flow = page.frameLocator('iframe[data-hitch-link]');
    try {
      await run(page, flow, f, shot);
    } catch (e) {
      // Say what the flow showed instead, for the test's log.
      const views = await flow.locator('[id^="view-"]:visible').evaluateAll(
        (els) => els.map((el) => el.id + ': ' + el.textContent.replace(/\s+/g, ' ').trim().slice(0, 300))).catch(() => []);
      console.error(`flow ${i} (${f.username}): visible: ${JSON.stringify(views)}`);
      throw e;
    }
    await page.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(results) + '\n');

// run logs in through the flow and records the outcome in results.
async function run(page, flow, f, shot) {
  await flow.locator('#search').fill('reference');
  // The list is redrawn when the server's answer to the search comes:
  // a click before that may land on a merchant moving away.
  await flow.locator('#merchants li:not([hidden])').first().filter({ hasText: 'Hitch Reference Shop' }).waitFor();
  await flow.locator('.merchant', { hasText: 'Hitch Reference Shop' }).click();
  await flow.locator('#username').fill(f.username);
  await flow.locator('#password').fill(f.password);
  const before = f.otp ? await latestCode(f.username, null).catch(() => null) : null;
  let started = Date.now();
  let waited = 0;
  await flow.locator('#login-submit').click();
  const result = { status: '', ms: 0 };
  const outcome = flow.locator('#view-success:visible, #view-failure:visible, #view-otp:visible, #view-question:visible, #login-error:visible').first();
  await outcome.waitFor();
  if (f.otp && await flow.locator('#view-otp').isVisible()) {
    const t0 = Date.now();
    const code = await latestCode(f.username, before);
    waited += Date.now() - t0;
    await flow.locator('#otp').fill(code);
    await flow.locator('#otp-submit').click();
  }
  if (f.answer && await flow.locator('#view-question').isVisible()) {
    result.question = (await flow.locator('#question-message').textContent()) || '';
    await flow.locator('#answer').fill(f.answer);
    await flow.locator('#question-submit').click();
  }
  await flow.locator('#view-success:visible, #view-failure:visible, #login-error:visible').first().waitFor();
  result.ms = Date.now() - started - waited;
  if (await flow.locator('#view-success').isVisible()) {
    result.status = 'success';
  } else if (await flow.locator('#login-error').isVisible()) {
    result.status = 'error';
    result.message = await flow.locator('#login-error').textContent();
  } else {
    result.status = 'failure';
    result.message = await flow.locator('#failure-message').textContent();
  }
  await shot(result.status);
  results.push(result);
}
