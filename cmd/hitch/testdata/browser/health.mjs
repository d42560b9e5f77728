// Drives Debian's Chromium through the dashboard's health pages as one
// member (MODE viewer or developer), at a desktop and a phone width:
// signs in (choosing a password of the member's own first, as a member
// given one must), reads the overview, delivery health, account health and
// a user's timeline, and checks that the charts are drawn without script,
// labelled, fit the width and have their figures as a table. A viewer's
// page has no resend or replay, and its posts of both (with a valid form
// token) are refused; a developer resends the refused event from its
// failed attempt's button and replays the last hour. Run by
// cmd/hitch/health_browser_test.go (TestBrowserHealth), which compares
// what was read with the API's answers; prints one JSON line per viewport.
//
// Environment: HITCH_URL, OUT_DIR, MODE, EMAIL, PASSWORD (the operator's),
// NEW_PASSWORD, ENDPOINT_ID, USER_ID (the user whose timeline is read),
// CHROMIUM.
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const base = process.env.HITCH_URL;
const out = process.env.OUT_DIR;
const mode = process.env.MODE;
const endpoint = process.env.ENDPOINT_ID;
const timeout = 60000;

function check(ok, what) {
  if (!ok) throw new Error(what);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

const viewports = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

try {
  let password = process.env.PASSWORD;
  for (const vp of viewports) {
    const context = await browser.newContext({ viewport: { width: vp.width, height: vp.height },
      userAgent: `hitch-browser-test (${mode} ${vp.name})`, javaScriptEnabled: true });
    const page = await context.newPage();
    page.setDefaultTimeout(timeout);
    const problems = [];
    page.on('pageerror', (err) => problems.push(String(err)));
    const shot = (name) => page.screenshot({ path: join(out, `health-${mode}-${name}-${vp.name}.png`), fullPage: true });
    const noOverflow = async (what) => {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      check(overflow <= 1, `the ${what} page is ${overflow}px wider than the ${vp.name} viewport`);
    };
    const text = (sel) => page.locator(sel).first().innerText().then((s) => s.trim());

    // Sign in; the first time, choose a password of the member's own.
    await page.goto(base + '/dashboard/signin');
    await page.fill('#email', process.env.EMAIL);
    await page.fill('#password', password);
    await page.click('#signin-submit');
    if (password === process.env.PASSWORD) {
      await page.waitForURL(/\/dashboard\/password$/);
      await page.fill('#current', password);
      await page.fill('#new', process.env.NEW_PASSWORD);
      await page.fill('#confirm', process.env.NEW_PASSWORD);
      await page.click('#password-submit');
      password = process.env.NEW_PASSWORD;
    }
    await page.waitForURL(/\/dashboard(\?.*)?$/);

    // Charts: an SVG drawn by the server, labelled by its caption, as wide
    // as its figure, with its figures in a table behind a summary.
    const charts = async () => page.evaluate(() => [...document.querySelectorAll('figure.chart')].map((f) => {
      const svg = f.querySelector('svg');
      const caption = document.getElementById(svg.getAttribute('aria-labelledby'));
      return {
        id: f.id, role: svg.getAttribute('role'), caption: caption ? caption.textContent : null,
        viewBox: svg.getAttribute('viewBox'), width: svg.getBoundingClientRect().width,
        figureWidth: f.getBoundingClientRect().width,
        marks: [...svg.querySelectorAll('rect > title, circle > title')].map((t) => t.textContent),
        rows: [...f.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent)),
        series: [...f.querySelectorAll('thead th')].slice(1).map((th) => th.textContent),
      };
    }));
    const checkCharts = (list, what) => {
      check(list.length > 0, `no chart on the ${what} page`);
      for (const c of list) {
        check(c.role === 'img' && c.caption && c.viewBox, `${what} chart ${c.id} is not labelled: ${JSON.stringify(c)}`);
        check(c.width > 0 && c.width <= c.figureWidth + 1, `${what} chart ${c.id} is ${c.width}px in a ${c.figureWidth}px figure`);
        // Each mark says a figure of the table.
        const cells = new Set();
        for (const r of c.rows) r.slice(1).forEach((v, i) => cells.add(`${r[0]}, ${c.series[i]}: ${v}`));
        for (const m of c.marks) check(cells.has(m), `${what} chart ${c.id}: mark "${m}" is not in its table`);
      }
    };

    const result = { viewport: vp.name, mode };
    // The overview.
    result.overview = { relogin: await text('#overview-relogin-count'), rate: await text('#overview-delivery-rate') };
    const overviewCharts = await charts();
    checkCharts(overviewCharts, 'overview');
    await noOverflow('overview');
    await shot('overview');

    // Delivery health of the last hour.
    await page.goto(base + '/dashboard/health/webhooks?window=hour');
    const sec = `#health-${endpoint}`;
    const hourCharts = await charts();
    checkCharts(hourCharts, 'delivery health');
    const attempts = hourCharts.find((c) => c.id === `${endpoint}-attempts`);
    check(attempts && attempts.rows.length === 12, 'the hour has no 12 five-minute buckets');
    // Open the table behind the chart, as a person would.
    await page.locator(`#${endpoint}-attempts summary`).click();
    check(await page.locator(`#${endpoint}-attempts table`).isVisible(), 'the chart\'s table does not open');
    result.delivery = {
      succeeded: await text(`${sec} .succeeded`), failed: await text(`${sec} .failed`), rate: await text(`${sec} .rate`),
      pending: await page.locator(`${sec} .pending a`).count() ? (await text(`${sec} .pending code`)) : '',
      failedRows: await page.locator(`${sec} tr.failed-attempt`).evaluateAll((rows) => rows.map((r) => ({
        event: r.dataset.event, status: r.querySelector('.status').textContent.trim(),
        snippet: r.querySelector('.snippet').textContent.trim() }))),
      tableSucceeded: attempts.rows.reduce((n, r) => n + Number(r[1]), 0),
      tableFailed: attempts.rows.reduce((n, r) => n + Number(r[2]), 0),
      resendButtons: await page.locator(`${sec} button.resend`).count(),
      replayForms: await page.locator(`${sec} form.replay-form`).count(),
    };
    await noOverflow('delivery health');
    await shot('webhooks');

    if (mode === 'viewer' && vp.name === 'desktop') {
      // The buttons are absent, and the posts they would send are refused
      // even with the sign-in's form token.
      const csrf = await page.locator('form.signout input[name=csrf]').inputValue();
      const failedEvent = result.delivery.failedRows[0].event;
      const now = new Date();
      const minute = (d) => d.toISOString().slice(0, 16);
      const replay = await page.request.post(base + '/dashboard/health/webhooks/replay', {
        form: { csrf, endpoint_id: endpoint, since: minute(new Date(now - 3600e3)), until: minute(now) }, maxRedirects: 0 });
      const resend = await page.request.post(base + `/dashboard/webhooks/events/${failedEvent}/resend`, {
        form: { csrf, endpoint_id: endpoint }, maxRedirects: 0 });
      result.refused = { replay: replay.status(), resend: resend.status() };
    }
    if (mode === 'developer' && vp.name === 'desktop') {
      // Resend the refused event from its failed attempt's button.
      await page.locator(`${sec} tr.failed-attempt button.resend`).first().click();
      await page.waitForURL(/\/dashboard\/webhooks\/events\/.*notice=event\.resent\.one/);
      await page.goto(base + '/dashboard/health/webhooks?window=hour');
      await page.locator(`${sec} form.replay-form button.replay`).click();
      await page.waitForURL(/notice=events\.replayed/);
      result.done = await text('.notice');
      await shot('replayed');
      await page.goto(base + '/dashboard/health/webhooks?window=hour');
    }

    // Account health.
    await page.goto(base + '/dashboard/health/accounts?window=day');
    checkCharts(await charts(), 'account health');
    result.accounts = {};
    for (const id of ['accounts-connected', 'accounts-disconnected', 'accounts-unlinked', 'logins-authenticated',
      'logins-failed', 'cards-succeeded', 'cards-failed', 'detections', 'detection-hits']) {
      result.accounts[id] = await text('#' + id);
    }
    result.merchants = await page.locator('#merchant-health tbody tr').evaluateAll((rows) => rows.map((r) => ({
      merchant: Number(r.dataset.merchant), connected: r.querySelector('.connected').textContent.trim(),
      disconnected: r.querySelector('.disconnected').textContent.trim(),
      reasons: [...r.querySelectorAll('.reason')].map((s) => s.textContent.trim()) })));
    await noOverflow('account health');
    await shot('accounts');

    // The user's timeline, from the form on the account health page.
    await page.fill('#timeline-id', process.env.USER_ID);
    await page.press('#timeline-id', 'Enter');
    await page.waitForURL(/\/dashboard\/health\/user\?id=/);
    result.timeline = await page.locator('#timeline tr.entry').evaluateAll((rows) => rows.map((r) => ({
      kind: r.dataset.kind, when: r.children[0].textContent.trim(), what: r.querySelector('.what').textContent.trim() })));
    await noOverflow('timeline');
    await shot('timeline');

    // No script runs on any of these pages.
    result.scripts = await page.evaluate(() => document.scripts.length);
    check(problems.length === 0, `page errors: ${problems.join('; ')}`);
    console.log(JSON.stringify(result));
    await context.close();
  }
} finally {
  await browser.close();
}
