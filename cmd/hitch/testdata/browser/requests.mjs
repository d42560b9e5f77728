// Drives Debian's Chromium through the request log as a viewer: sign-in
// (choosing a password of their own first), the overview's count of
// requests and errors, the request log from the
// navigation, every request the test made listed with the status, error
// code and user the API answered, the search by the request_id of an
// error body opening its request (whose response body is that error body),
// the 4xx filter, every request's page; no page shows a canary, and the
// viewer is offered no form but signing out (no resend, no replay).
// Saves a screenshot of each page. Run by cmd/hitch/requests_browser_test.go
// (TestBrowserRequestLog); prints one JSON line.
//
// Environment: HITCH_URL, OUT_DIR, EMAIL, PASSWORD (the operator's),
// NEW_PASSWORD, CALLS (JSON: the requests made, with request_id, method,
// path, status, error_code, user and the error body), ERROR_ID (the
// request_id of an error body), CANARIES (JSON: strings no page may
// show), CHROMIUM.
import { chromium } from 'playwright-core';
import { join } from 'node:path';

const base = process.env.HITCH_URL;
const out = process.env.OUT_DIR;
const calls = JSON.parse(process.env.CALLS);
const canaries = JSON.parse(process.env.CANARIES);
const errorID = process.env.ERROR_ID;
// How long one step may wait (slow CI machines).
const timeout = 60000;

// sorted is v's JSON with object keys sorted: two bodies compare equal
// whatever the order of their keys.
function sorted(v) {
  if (Array.isArray(v)) return `[${v.map(sorted).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${sorted(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, userAgent: 'hitch-browser-test (requests)' });
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  const problems = [];
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(msg.text()); });
  page.on('pageerror', (err) => problems.push(String(err)));
  const shot = (name) => page.screenshot({ path: join(out, `requests-${name}.png`), fullPage: true });
  // The page shows no canary, in its text or its markup. A short number
  // (the CVV) counts only as a whole number: times, latencies and ids hold
  // any four digits now and then.
  const holds = (text, c) => (c.length >= 12 || /[^0-9]/.test(c)
    ? text.includes(c)
    : new RegExp(`(^|[^0-9A-Za-z])${c}([^0-9A-Za-z]|$)`).test(text));
  const noCanary = async (what) => {
    const html = await page.content();
    for (const c of canaries) check(!holds(html, c), `${what} shows the canary ${c}`);
    const forms = await page.locator('form[method="post"]').evaluateAll((fs) => fs.map((f) => f.getAttribute('action')));
    check(forms.every((a) => a === '/dashboard/signout'), `${what} offers a viewer the forms ${forms}`);
  };

  // Sign in, and choose a password of one's own.
  await page.goto(base + '/dashboard/requests');
  await page.waitForURL(/\/dashboard\/signin/);
  await page.fill('#email', process.env.EMAIL);
  await page.fill('#password', process.env.PASSWORD);
  await page.press('#password', 'Enter');
  await page.waitForURL(/\/dashboard\/password$/);
  await page.fill('#current', process.env.PASSWORD);
  await page.fill('#new', process.env.NEW_PASSWORD);
  await page.fill('#confirm', process.env.NEW_PASSWORD);
  await page.click('#password-submit');
  await page.waitForURL((u) => u.pathname === '/dashboard');

  // The overview counts the same requests, and the same errors.
  const errors = calls.filter((c) => c.status >= 400).length;
  const shownCount = Number((await page.locator('#overview-requests-count').textContent()).trim());
  check(shownCount === calls.length, `the overview counts ${shownCount} requests, the test made ${calls.length}`);
  const wantRate = `${Math.round((1000 * errors) / calls.length) / 10}%`;
  const shownRate = (await page.locator('#overview-error-rate').textContent()).trim();
  check(shownRate === wantRate, `the overview shows an error rate of ${shownRate}, want ${wantRate}`);
  const chartTotal = await page.locator('#overview-requests-chart table tbody tr').evaluateAll((trs) =>
    trs.reduce((n, tr) => n + [...tr.querySelectorAll('td')].reduce((m, td) => m + (Number(td.textContent) || 0), 0), 0));
  check(chartTotal === calls.length, `the requests chart's table sums to ${chartTotal}, want ${calls.length}`);
  await shot('overview');

  // The request log, from the navigation.
  await page.locator('nav.side a', { hasText: 'Request log' }).click();
  await page.waitForURL((u) => u.pathname === '/dashboard/requests');
  await page.locator('h1', { hasText: 'Request log' }).waitFor();
  await shot('list');
  await noCanary('the request log');
  const rows = await page.locator('#requests tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    id: tr.dataset.requestId,
    line: tr.querySelector('code').textContent.trim(),
    status: Number(tr.querySelector('.status').textContent.trim()),
    errorCode: tr.querySelector('.error-code').textContent.trim(),
    user: tr.querySelector('.user').textContent.trim(),
  })));
  // Newest first: the calls in reverse.
  check(rows.length === calls.length, `${rows.length} requests listed, want ${calls.length}`);
  let listed = 0;
  [...calls].reverse().forEach((c, i) => {
    const r = rows[i];
    check(r.id === c.request_id, `row ${i} is ${r.id}, want ${c.request_id}`);
    check(r.line === `${c.method} ${c.path}`, `row ${i} shows ${r.line}, want ${c.method} ${c.path}`);
    check(r.status === c.status, `row ${i} shows status ${r.status}, the API answered ${c.status}`);
    check(r.errorCode === c.error_code, `row ${i} shows error code ${r.errorCode}, the API answered ${c.error_code}`);
    check(r.user === c.user, `row ${i} shows user ${r.user}, want ${c.user}`);
    listed++;
  });

  // The request_id of an error body, searched, opens its request.
  await page.fill('#request-id', errorID);
  await page.click('#request-search');
  await page.waitForURL((u) => u.pathname === '/dashboard/requests/' + errorID);
  const errorCall = calls.find((c) => c.request_id === errorID);
  check((await page.locator('#request-id').textContent()).trim() === errorID, 'the page shows another request id');
  check(Number((await page.locator('#request-status').textContent()).trim()) === errorCall.status, 'the status differs from the API answer');
  check((await page.locator('#request-error-code').textContent()).trim() === errorCall.error_code, 'the error code differs from the API answer');
  const shownBody = JSON.parse(await page.locator('#response-body').textContent());
  check(sorted(shownBody) === sorted(errorCall.body), `the response body shown ${JSON.stringify(shownBody)} is not the error body ${JSON.stringify(errorCall.body)}`);
  await shot('error');

  // The 4xx filter lists the refused requests only.
  await page.goto(base + '/dashboard/requests');
  await page.selectOption('#request-status', '4xx');
  await page.click('#request-search');
  await page.waitForURL(/status=4xx/);
  const refused = await page.locator('#requests tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.requestId));
  const wantRefused = [...calls].reverse().filter((c) => c.status >= 400).map((c) => c.request_id);
  check(JSON.stringify(refused) === JSON.stringify(wantRefused), `4xx lists ${refused}, want ${wantRefused}`);
  await shot('4xx');

  // Every request's page: what the API answered, no canary.
  let pages = 0;
  for (const c of calls) {
    await page.goto(base + '/dashboard/requests/' + c.request_id);
    await page.locator('#request-line', { hasText: `${c.method} ${c.path}` }).waitFor();
    check(Number((await page.locator('#request-status').textContent()).trim()) === c.status, `${c.path}: status differs`);
    await noCanary(`the page of ${c.method} ${c.path}`);
    await shot('request-' + pages);
    pages++;
  }
  check(problems.length === 0, `browser problems: ${problems.join('; ')}`);
  console.log(JSON.stringify({ listed, pages }));
} finally {
  await browser.close();
}
