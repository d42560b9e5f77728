// Drives Debian's Chromium through the team dashboard at a desktop and a
// phone width: sign-in, choosing a password (the desktop run: the member
// was given one by the operator), every page, revealing and rotating the
// API secret, hiding and showing a merchant, sign-out. Saves a screenshot
// of each page. Run by cmd/hitch/browser_test.go (TestBrowserDashboard),
// which checks the audit records the actions wrote; prints one JSON line
// per viewport.
//
// Environment: HITCH_URL, OUT_DIR, EMAIL, PASSWORD (the operator's),
// NEW_PASSWORD (the member's own), USER_ID (a user with a linked account),
// CHROMIUM.
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const base = process.env.HITCH_URL;
const out = process.env.OUT_DIR;
const timeout = 15000;

const viewports = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

try {
  for (const vp of viewports) {
    // A context of its own: its own cookies, as a second person would have.
    const context = await browser.newContext({ viewport: { width: vp.width, height: vp.height },
      userAgent: `hitch-browser-test (${vp.name})` });
    const page = await context.newPage();
    page.setDefaultTimeout(timeout);
    const problems = [];
    // The wrong password's 401 is the one failed load expected.
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/status of 401/.test(msg.text())) problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(String(err)));
    const shot = (name) => page.screenshot({ path: join(out, `dashboard-${name}-${vp.name}.png`), fullPage: true });

    // Signed out, the dashboard sends the person to the sign-in page.
    await page.goto(base + '/dashboard/credentials');
    await page.waitForURL(/\/dashboard\/signin/);
    const focused = await page.locator('#email').evaluate((el) => el === document.activeElement);
    if (!focused) throw new Error('the sign-in form does not focus the e-mail');
    await shot('signin');
    await page.fill('#email', process.env.EMAIL);
    await page.fill('#password', 'not the password');
    await page.click('#signin-submit');
    await page.locator('#page-error').waitFor();
    await shot('signin-error');
    if (vp.name === 'desktop') {
      // The operator chose the password: every page sends the member to
      // choose their own first.
      await page.fill('#password', process.env.PASSWORD);
      await page.press('#password', 'Enter');
      await page.waitForURL(/\/dashboard\/password$/);
      await page.locator('#must-change').waitFor();
      await shot('password');
      await page.fill('#current', process.env.PASSWORD);
      await page.fill('#new', process.env.NEW_PASSWORD);
      await page.fill('#confirm', process.env.NEW_PASSWORD);
      await page.click('#password-submit');
      await page.locator('.notice', { hasText: 'Your password was changed' }).waitFor();
      await page.click('nav.side a[href="/dashboard/credentials"]');
    } else {
      await page.fill('#password', process.env.NEW_PASSWORD);
      await page.press('#password', 'Enter');
      // Back where the person was going.
      await page.waitForURL(/\/dashboard\/credentials$/);
      await page.click('#password-link');
      await page.locator('#password-form').waitFor();
      await shot('password');
      await page.click('nav.side a[href="/dashboard/credentials"]');
    }
    await page.locator('#reveal-secret').waitFor();

    await page.click('#reveal-secret');
    await page.locator('#shown-value').waitFor();
    const revealed = (await page.locator('#shown-value').textContent()).trim();
    await shot('credentials-revealed');
    await page.click('#rotate-secret');
    await page.locator('.notice', { hasText: 'rotated' }).waitFor();
    const rotated = (await page.locator('#shown-value').textContent()).trim();
    await shot('credentials-rotated');

    await page.click('nav.side a[href="/dashboard"]');
    await page.locator('h1', { hasText: 'Overview' }).waitFor();
    await shot('overview');

    await page.click('nav.side a[href="/dashboard/webhooks"]');
    await page.locator('#endpoints').waitFor();
    await shot('webhooks');
    await page.locator('#events a').first().click();
    await page.locator('h2', { hasText: 'Delivery attempts' }).waitFor();
    await shot('event');

    await page.click('nav.side a[href="/dashboard/users"]');
    await page.fill('#user-q', process.env.USER_ID.slice(0, 6));
    await page.press('#user-q', 'Enter');
    await page.locator('#users a', { hasText: process.env.USER_ID }).click();
    await page.locator('.account').first().waitFor();
    await shot('user');
    await page.goBack();
    await shot('users');

    await page.click('nav.side a[href="/dashboard/merchants"]');
    await page.fill('#merchant-q', 'netflix');
    await page.press('#merchant-q', 'Enter');
    await page.locator('tr[data-merchant="4"] button', { hasText: 'Hide' }).click();
    await page.locator('tr[data-merchant="4"] .pill-hidden').waitFor();
    await shot('merchants');
    await page.locator('tr[data-merchant="4"] button', { hasText: 'Show' }).click();
    await page.locator('tr[data-merchant="4"] .pill-shown').waitFor();

    await page.click('nav.side a[href="/dashboard/members"]');
    await page.locator('#members').waitFor();
    await shot('members');

    // Nothing on any page overflows the viewport sideways.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 1) throw new Error(`the members page is ${overflow}px wider than the ${vp.name} viewport`);

    await page.click('.signout button');
    await page.waitForURL(/\/dashboard\/signin/);
    if (problems.length) throw new Error('console errors: ' + problems.join('; '));
    process.stdout.write(JSON.stringify({ viewport: vp.name, revealed, rotated }) + '\n');
    await context.close();
  }
} finally {
  await browser.close();
}
