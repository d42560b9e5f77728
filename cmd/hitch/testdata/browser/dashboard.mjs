// Drives Debian's Chromium through the team dashboard at a desktop and a
// phone width: sign-in, choosing a password (the desktop run: the member
// was given one by the operator, which the page says in other colours
// than a success's; a wrong current password and a too short new one are
// refused first; the change leads to the overview), every page, the
// header (the environment named once), revealing and rotating the API
// secret, the webhooks page fitting the width, editing the webhook
// endpoint (the desktop run: a refused URL, then a new URL and event
// filter; the phone run sees the change), hiding and showing a merchant,
// the audit log (the desktop run: every page, the date filter and its
// pages, a refused date range), sign-out. Saves a screenshot of each page.
// Run by cmd/hitch/browser_test.go (TestBrowserDashboard), which checks
// the endpoint and the audit records the actions wrote; prints one JSON
// line per viewport.
//
// Environment: HITCH_URL, OUT_DIR, EMAIL, PASSWORD (the operator's),
// NEW_PASSWORD (the member's own), USER_ID (a user with a linked account),
// ENDPOINT_URL (the one webhook endpoint), EDITED_URL (what the edit makes
// it), AUDIT_DAY (YYYY-MM-DD: the day of the log's first AUDIT_FIXTURES
// records; no other record is of that day), CHROMIUM.
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const base = process.env.HITCH_URL;
const out = process.env.OUT_DIR;
// How long one step may wait. CI runs these beside every other package
// under the race detector, where on a slow 2-CPU VM a click can take over
// 15 s.
const timeout = 60000;
const auditDay = process.env.AUDIT_DAY;
const auditFixtures = Number(process.env.AUDIT_FIXTURES);
const auditPerPage = 50;

const viewports = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

function check(ok, what) {
  if (!ok) throw new Error(what);
}

// dayAfter returns the YYYY-MM-DD after day, or before it for n = -1.
function dayAfter(day, n = 1) {
  const d = new Date(day + 'T00:00:00Z');
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

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
    // Pages answered with an error status are logged as failed loads: the
    // wrong password's 401 always, others while a step expects them.
    const expectedStatuses = new Set([401]);
    page.on('console', (msg) => {
      const status = /status of (\d+)/.exec(msg.text());
      if (msg.type() === 'error' && !(status && expectedStatuses.has(Number(status[1])))) problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(String(err)));
    const shot = (name) => page.screenshot({ path: join(out, `dashboard-${name}-${vp.name}.png`), fullPage: true });
    // Nothing on a page overflows the viewport sideways.
    const noOverflow = async (what) => {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      check(overflow <= 1, `the ${what} page is ${overflow}px wider than the ${vp.name} viewport`);
    };
    // expecting runs step with status among the expected failed loads.
    const expecting = async (status, step) => {
      expectedStatuses.add(status);
      try { await step(); } finally { expectedStatuses.delete(status); }
    };

    // Signed out, the dashboard sends the person to the sign-in page.
    await page.goto(base + '/dashboard/credentials');
    await page.waitForURL(/\/dashboard\/signin/);
    const focused = await page.locator('#email').evaluate((el) => el === document.activeElement);
    check(focused, 'the sign-in form does not focus the e-mail');
    await shot('signin');
    await page.fill('#email', process.env.EMAIL);
    await page.fill('#password', 'not the password');
    // Refused after the padding of every refusal (ten password checks'
    // time and half again, member's refusalFloor): seconds at most.
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
      // What the member must do is not shown as a success.
      const colours = await page.evaluate(() => {
        const success = document.createElement('p');
        success.className = 'notice';
        document.querySelector('main').append(success);
        const of = (el) => { const s = getComputedStyle(el); return s.color + ' on ' + s.backgroundColor; };
        const got = { mustChange: of(document.getElementById('must-change')), success: of(success) };
        success.remove();
        return got;
      });
      check(colours.mustChange !== colours.success, `the forced password change is shown in the success colours (${colours.success})`);
      await shot('password');
      const changePassword = async (current, next) => {
        await page.fill('#current', current);
        await page.fill('#new', next);
        await page.fill('#confirm', next);
        await page.click('#password-submit');
      };
      // A wrong current password is refused, and the member must still
      // choose their own.
      await expecting(403, async () => {
        await changePassword('not the current password', process.env.NEW_PASSWORD);
        await page.locator('#page-error', { hasText: 'current password is wrong' }).waitFor();
      });
      await page.locator('#must-change').waitFor();
      // So is a new password shorter than the minimum, by the server too:
      // the form's minlength is only a hint to the browser.
      const min = Number(await page.locator('#new').getAttribute('minlength'));
      check(min >= 8, `the new password's minlength is ${min}`);
      await page.locator('#password-form').evaluate((form) => { form.noValidate = true; });
      await expecting(400, async () => {
        await changePassword(process.env.PASSWORD, 'x'.repeat(min - 1));
        await page.locator('#page-error', { hasText: `at least ${min} characters` }).waitFor();
      });
      check(await page.inputValue('#new') === '' && await page.inputValue('#current') === '',
        'a refused password change shows the passwords typed back');
      await shot('password-refused');
      // Then the change. Whatever the sign-in cookie becomes, the browser
      // follows the redirect with it and stays signed in, on the overview.
      await changePassword(process.env.PASSWORD, process.env.NEW_PASSWORD);
      await page.waitForURL((u) => u.pathname === '/dashboard');
      await page.locator('h1', { hasText: 'Overview' }).waitFor();
      await page.locator('.notice', { hasText: 'Your password was changed' }).waitFor();
      await page.click('#password-link');
      await page.locator('#password-form').waitFor();
      check(await page.locator('#must-change').count() === 0, 'the member must still change their password');
      await page.click('nav.side a[href="/dashboard/credentials"]');
    } else {
      // The password chosen in the desktop run signs in.
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
    // The header names the environment once, however the developer is
    // named ("Development", as serve names its own, is the badge alone).
    const header = await page.locator('header.top').innerText();
    check((header.match(/development/gi) || []).length === 1, `the header says ${JSON.stringify(header)}`);

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
    // The endpoints and the events fit the width, a phone's too: nothing
    // to scroll sideways, in the page or in the tables.
    await noOverflow('webhooks');
    for (const table of ['#endpoints', '#events']) {
      const wider = await page.locator(table).evaluate((el) => el.scrollWidth - el.parentElement.clientWidth);
      check(wider <= 1, `the ${table} table is ${wider}px wider than its place at ${vp.name} width`);
    }

    // The endpoint's edit page, from its row.
    const endpointRows = page.locator('#endpoints tbody tr');
    check(await endpointRows.count() === 1, `${await endpointRows.count()} endpoint rows, want 1`);
    await endpointRows.locator('a', { hasText: 'Edit' }).click();
    await page.waitForURL(/\/dashboard\/webhooks\/endpoints\/[^/?]+$/);
    await page.locator('#edit-endpoint').waitFor();
    const checkedEvents = () => page.locator('#edit-endpoint input[name="events"]:checked')
      .evaluateAll((boxes) => boxes.map((b) => b.value));
    if (vp.name === 'desktop') {
      // The form shows the endpoint as it is: its URL, every event.
      check(await page.inputValue('#endpoint-url') === process.env.ENDPOINT_URL,
        `the edit form shows ${await page.inputValue('#endpoint-url')}`);
      check((await checkedEvents()).length === 0, 'the edit form checks events of an endpoint that takes every event');
      await shot('endpoint');
      // A URL the endpoint policy refuses (the browser's url type takes
      // it) is shown again with the reason, and changes nothing.
      await page.fill('#endpoint-url', 'ftp://example.com/hooks');
      await page.check('#edit-endpoint input[name="events"][value="TEST"]');
      await expecting(400, async () => {
        await page.click('#edit-endpoint button[type="submit"]');
        await page.locator('#page-error', { hasText: 'Nothing was changed' }).waitFor();
      });
      check(await page.inputValue('#endpoint-url') === 'ftp://example.com/hooks' &&
        (await checkedEvents()).join() === 'TEST', 'the refused edit does not show what was sent');
      // A new URL and an event filter.
      await page.fill('#endpoint-url', process.env.EDITED_URL);
      await page.check('#edit-endpoint input[name="events"][value="AUTHENTICATED"]');
      await page.click('#edit-endpoint button[type="submit"]');
      await page.waitForURL(/\/dashboard\/webhooks(\?|$)/);
      await page.locator('.notice', { hasText: 'The endpoint was changed' }).waitFor();
      await page.locator('#endpoints').waitFor();
    } else {
      // The desktop run's edit, as a later visit finds it.
      check(await page.inputValue('#endpoint-url') === process.env.EDITED_URL,
        `the edit form shows ${await page.inputValue('#endpoint-url')}, want the edited URL`);
      check((await checkedEvents()).join() === 'AUTHENTICATED,TEST', `the edit form checks ${await checkedEvents()}`);
      await shot('endpoint');
      await noOverflow('endpoint');
      await page.click('.crumbs a[href="/dashboard/webhooks"]');
      await page.locator('#endpoints').waitFor();
    }
    const endpointRow = await endpointRows.evaluateAll((trs) => trs.map((tr) => ({
      url: tr.querySelector('code').textContent, events: tr.cells[1].textContent.trim() })));
    check(endpointRow.length === 1 && endpointRow[0].url === process.env.EDITED_URL && endpointRow[0].events === 'AUTHENTICATED, TEST',
      'the webhooks page lists ' + JSON.stringify(endpointRow));

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
    await noOverflow('members');

    // The origins that may frame the flow: none yet, so in development
    // any site may (looking changes nothing and records nothing).
    await page.click('nav.side a[href="/dashboard/link"]');
    await page.locator('h1', { hasText: 'Link flow' }).waitFor();
    await page.locator('#no-origins').waitFor();
    check((await page.locator('#frame-ancestors').textContent()).trim() === 'frame-ancestors *',
      'the link page does not show the development default frame-ancestors *');
    await page.locator('#origins-text').waitFor();
    await shot('link');
    await noOverflow('link');

    // The audit log, newest first.
    await page.click('nav.side a[href="/dashboard/audit"]');
    await page.locator('h1', { hasText: 'Audit log' }).waitFor();
    await shot('audit');
    await noOverflow('audit');
    if (vp.name === 'desktop') {
      const rows = page.locator('#audit-records tbody tr');
      const seqs = () => rows.evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.seq)));
      // readPages turns every page from this one on, checking that each
      // but the last is full and that every page keeps the filter; it
      // returns the records' sequence numbers and targets in page order.
      const readPages = async (filter) => {
        const all = [];
        for (let n = 1; ; n++) {
          const page1 = await seqs();
          const targets = await rows.evaluateAll((trs) => trs.map((tr) => tr.cells[4].textContent.trim()));
          all.push(...page1.map((seq, i) => ({ seq, target: targets[i] })));
          check(n === 1 || await page.locator('#audit-first').count() === 1, `page ${n} has no link to the newest records`);
          const next = page.locator('#audit-next');
          if (await next.count() === 0) return all;
          check(page1.length === auditPerPage, `page ${n} has ${page1.length} records and a next page`);
          const href = new URL(await next.getAttribute('href'), base);
          for (const [k, v] of Object.entries(filter)) {
            check(href.searchParams.get(k) === v, `the next page link ${href} drops ${k}=${v}`);
          }
          await next.click();
          await page.waitForURL((u) => u.search === href.search);
        }
      };
      const consecutive = (all, from, what) => {
        all.forEach((r, i) => check(r.seq === from - i, `${what}: record ${i} is #${r.seq}, want #${from - i}`));
      };

      // Every record, once, page by page; then back to the newest.
      const everything = await readPages({});
      check(everything.length > auditPerPage, `${everything.length} records in the log, want more than a page`);
      consecutive(everything, everything.length, 'the log');
      await page.click('#audit-first');
      await page.waitForURL((u) => u.pathname === '/dashboard/audit' && !u.searchParams.has('cursor'));
      check((await seqs())[0] === everything.length, 'the newest records link does not start at the newest');

      // The earlier day alone: its records, on two pages, filter kept.
      await page.fill('#audit-from', auditDay);
      await page.fill('#audit-to', auditDay);
      await page.click('#audit-filter button[type="submit"]');
      await page.waitForURL((u) => u.searchParams.get('from') === auditDay && u.searchParams.get('to') === auditDay);
      check(await page.inputValue('#audit-from') === auditDay && await page.inputValue('#audit-to') === auditDay,
        'the filter does not show its dates');
      await shot('audit-filtered');
      const thatDay = await readPages({ from: auditDay, to: auditDay });
      consecutive(thatDay, auditFixtures, `the records of ${auditDay}`);
      check(thatDay.length === auditFixtures && thatDay.every((r) => /earlier-user-/.test(r.target)),
        `${thatDay.length} records of ${auditDay}, want the ${auditFixtures} made that day`);

      // A day without records, and a range that ends before it starts.
      await page.fill('#audit-from', dayAfter(auditDay, -1));
      await page.fill('#audit-to', dayAfter(auditDay, -1));
      await page.click('#audit-filter button[type="submit"]');
      await page.locator('main p.muted', { hasText: 'No record in these dates' }).waitFor();
      await page.fill('#audit-from', dayAfter(auditDay));
      await page.fill('#audit-to', auditDay);
      await expecting(400, async () => {
        await page.click('#audit-filter button[type="submit"]');
        await page.locator('#page-error', { hasText: 'The To date is before the From date' }).waitFor();
      });
      check(await rows.count() === 0, 'a refused date range lists records');
      await page.locator('#audit-filter a', { hasText: 'Every date' }).click();
      await page.waitForURL((u) => u.pathname === '/dashboard/audit' && u.search === '');
      check((await seqs())[0] === everything.length, 'every date does not list the newest record first');
    }

    await page.click('.signout button');
    await page.waitForURL(/\/dashboard\/signin/);
    if (problems.length) throw new Error('console errors: ' + problems.join('; '));
    process.stdout.write(JSON.stringify({ viewport: vp.name, revealed, rotated }) + '\n');
    await context.close();
  }
} finally {
  await browser.close();
}
