// Drives Debian's Chromium through what a newcomer does first on the demo
// page: a card switch for which the demo's server posts a test card, one
// for which the newcomer chose no card (the page says CARD_FAILED follows
// when the card window ends), and a login refused for its credentials,
// after which the flow keeps the username and asks the password again.
// Run by cmd/hitch/newcomer_test.go (TestBrowserNewcomer), which checks
// the webhooks that follow; prints one JSON line per scenario.
//
// Environment: HITCH_URL, OUT_DIR (screenshots), RUN_ID (makes user ids
// unique), CARD_WINDOW (as the demo page should say it, e.g. 3s), CHROMIUM.
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const base = process.env.HITCH_URL;
const out = process.env.OUT_DIR;
const runID = process.env.RUN_ID;
// How long one step may wait: CI runs these beside every other package
// under the race detector on a slow 2-CPU VM.
const timeout = 60000;

function check(ok, what) {
  if (!ok) throw new Error(what);
}

function report(line) {
  process.stdout.write(JSON.stringify(line) + '\n');
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(timeout);
  const problems = [];
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(msg.text()); });
  page.on('pageerror', (err) => problems.push(String(err)));
  const shot = (name) => page.screenshot({ path: join(out, `newcomer-${name}.png`), fullPage: true });
  await page.goto(base + '/demo');

  // The choice of a card shows for the card switcher only.
  check(await page.locator('#card-choice').isHidden(), 'the card choice shows for transaction_link');
  await page.selectOption('#type', 'card_switcher');
  await page.locator('#card-choice').waitFor({ state: 'visible' });
  const note = await page.locator('#card-note').textContent();
  check(note.includes('CARD_FAILED') && note.includes(process.env.CARD_WINDOW),
    `the card note does not say CARD_FAILED follows after ${process.env.CARD_WINDOW}: ${note}`);
  await shot('card-choice');

  // cardSwitch logs in at Amazon through the demo with the card chosen
  // (its option's value; '' for none) and returns the user and the
  // entry the demo's server logged.
  const cardSwitch = async (name, number) => {
    const user = `newcomer-${runID}-${name}`;
    await page.fill('#external-user-id', user);
    await page.selectOption('#type', 'card_switcher');
    await page.selectOption('#demo-card', number);
    const server = page.locator('#log li[data-callback^="server:"]');
    const before = await server.count();
    await page.click('#open');
    const flow = page.frameLocator('iframe[data-hitch-link]');
    await flow.locator('#search').fill('amazon');
    // The list is redrawn when the server's answer to the search comes:
    // a click before that may land on a merchant moving away.
    await flow.locator('#merchants li:not([hidden])').first().filter({ hasText: 'Amazon' }).waitFor();
    await flow.locator('.merchant', { hasText: 'Amazon' }).first().click();
    await flow.locator('#username').fill('user_good');
    await flow.locator('#password').fill('pass_good');
    await flow.locator('#login-submit').click();
    await flow.locator('#view-success').waitFor({ state: 'visible' });
    // The log's newest entry is first.
    await page.waitForFunction((n) => document.querySelectorAll('#log li[data-callback^="server:"]').length > n, before);
    const entry = await server.first().evaluate((li) => ({ callback: li.dataset.callback, text: li.querySelector('pre').textContent }));
    await shot(name);
    await flow.locator('#success-done').click();
    await page.locator('iframe[data-hitch-link]').waitFor({ state: 'detached' });
    return { user, entry };
  };

  // 1. The demo's server posts the test card for the login's task.
  const posted = await cardSwitch('card', '4242424242424242');
  check(posted.entry.callback === 'server: POST /card' && posted.entry.text.includes('4242424242424242'),
    'the demo did not post the card: ' + JSON.stringify(posted.entry));
  report({ scenario: 'card', externalUserId: posted.user });

  // 2. No card: the page says what follows.
  const none = await cardSwitch('none', '');
  check(none.entry.callback === 'server: no card' && none.entry.text.includes('CARD_FAILED'),
    'without a card the demo does not say CARD_FAILED follows: ' + JSON.stringify(none.entry));
  report({ scenario: 'none', externalUserId: none.user });

  // 3. Wrong credentials: the flow asks again, keeping the username.
  await page.fill('#external-user-id', `newcomer-${runID}-retry`);
  await page.selectOption('#type', 'transaction_link');
  await page.click('#open');
  const flow = page.frameLocator('iframe[data-hitch-link]');
  await flow.locator('#search').fill('netflix');
  // The list is redrawn when the server's answer to the search comes:
  // a click before that may land on a merchant moving away.
  await flow.locator('#merchants li:not([hidden])').first().filter({ hasText: 'Netflix' }).waitFor();
  await flow.locator('.merchant', { hasText: 'Netflix' }).first().click();
  await flow.locator('#username').fill('ada.lovelace');
  await flow.locator('#password').fill('credentials');
  await flow.locator('#login-submit').click();
  await flow.locator('#login-error').waitFor({ state: 'visible' });
  const after = await flow.locator('#login-form').evaluate((form) => ({
    username: form.querySelector('#username').value,
    password: form.querySelector('#password').value,
    focused: document.activeElement && document.activeElement.id,
  }));
  check(after.username === 'ada.lovelace', `the refused login's username became ${JSON.stringify(after.username)}`);
  check(after.password === '', 'the refused login keeps the password');
  check(after.focused === 'password', `after the refusal the focus is on ${after.focused}, want the password`);
  await shot('login-refused');
  report({ scenario: 'retry' });

  if (problems.length) throw new Error('console errors: ' + problems.join('; '));
} finally {
  await browser.close();
}
