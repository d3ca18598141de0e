// The dashboard's Principals page and the audit log's tool and principal
// filters in a real headless Chromium, driven by playwright-core
// (internal/webui/e2e's TestPrincipalsInBrowser runs this against a
// daemon with the operator's key and a [[principals]] entry, ci-bot).
// An admin mints a key for ci-bot in the page, copies it, and a client
// (fetch, as curl would) uses it on /api; the admin revokes it with the
// page's own confirmation, and the next request with it is a 401.
import { chromium } from 'playwright-core';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const base = process.env.AGENTD_URL;
const key = process.env.AGENTD_KEY; // the operator's (admin)
const ciKey = process.env.AGENTD_CI_KEY; // ci-bot's configured key
const shots = process.env.SHOTS;
const T = 20_000;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const context = await browser.newContext({ viewport: { width: 1360, height: 860 }, colorScheme: 'light', deviceScaleFactor: 1 });
context.setDefaultTimeout(T);
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
const page = await context.newPage();

const pageErrors = [];
const watch = (p) => {
  p.on('pageerror', (e) => pageErrors.push(`exception: ${e.message}`));
  p.on('console', (m) => { if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) pageErrors.push(`console: ${m.text()}`); });
  // Confirmations are asked in the page: a native confirm() is a failure.
  p.on('dialog', (d) => { pageErrors.push(`native dialog: ${d.message()}`); d.dismiss(); });
};
watch(page);

let current = '';
async function step(name, f) {
  current = name;
  const t0 = Date.now();
  await f();
  if (pageErrors.length) throw new Error(`page errors during "${name}":\n${pageErrors.join('\n')}`);
  console.log(`ok   ${name} (${Date.now() - t0} ms)`);
}

function check(cond, msg) { if (!cond) throw new Error(msg); }

async function shot(name, p = page) {
  await p.evaluate(() => { document.querySelectorAll('.toast').forEach((t) => t.remove()); return document.fonts?.ready; });
  await p.screenshot({ path: join(shots, `${name}.png`) });
}

async function go(p, hash) {
  await p.evaluate((h) => { location.hash = h; }, hash);
}

// curl is what a client outside the browser does with a key: a plain
// request with the bearer header, no cookie.
async function curl(method, path, bearer, body) {
  const init = { method, headers: { Authorization: `Bearer ${bearer}` } };
  if (body !== undefined) { init.body = JSON.stringify(body); init.headers['Content-Type'] = 'application/json'; }
  const r = await fetch(base + path, init);
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, json, text };
}

async function login(p, k) {
  await p.goto(base + '/');
  await p.locator('input[name="key"]').waitFor();
  await p.fill('input[name="key"]', k);
  await p.click('button[type="submit"]');
  await p.locator('#main').waitFor();
  await p.locator('.whoami').waitFor();
}

const rows = (p, sel) => p.locator(sel).count();

let minted = '';
let keyID = '';
try {
  await step('an admin finds Principals in the navigation, with every principal of the config', async () => {
    await login(page, key);
    await page.locator('#nav-principals').click();
    await page.locator('#principals-list tr.principal-row').nth(1).waitFor();
    const names = await page.locator('#principals-list [data-principal]').allTextContents();
    check(names.join(',') === 'admin,ci-bot', `principals listed: ${names}`);
    await page.locator('#principals-list tr.principal-row', { hasText: 'ci-bot' }).locator('td').nth(4).waitFor();
    const cred = await page.locator('#principals-list tr.principal-row', { hasText: 'ci-bot' }).locator('td').nth(4).textContent();
    check(cred.startsWith('key_sha256 '), `ci-bot's credential: ${cred}`);
  });

  await step('the admin principal is not mintable; ci-bot is', async () => {
    await page.click('#principals-list a[data-principal="admin"]');
    await page.locator('#principal-detail .note-box', { hasText: '[[principals]]' }).waitFor();
    check(await page.locator('#mint-form').count() === 0, 'a mint form for the operator\'s admin');
    await page.click('#principals-list a[data-principal="ci-bot"]');
    await page.locator('#mint-form').waitFor();
    await page.locator('#principal-detail .empty', { hasText: 'No minted keys' }).waitFor();
  });

  await step('a label that is too long is refused next to its field', async () => {
    await page.evaluate(() => { document.querySelector('#mint-form input[name="label"]').removeAttribute('maxlength'); });
    await page.fill('#mint-form input[name="label"]', 'x'.repeat(65));
    await page.click('#mint-key');
    await page.locator('#mint-form .field.invalid .field-error', { hasText: 'at most 64 characters' }).waitFor();
    check(await page.locator('#minted-secret').isHidden(), 'a key was shown after a refused mint');
  });

  await step('minting shows the key once, with a warning and a copy button that copies it', async () => {
    await page.fill('#mint-form input[name="label"]', 'e2e laptop');
    await page.click('#mint-key');
    await page.locator('#minted-secret .secret-card').waitFor();
    minted = await page.inputValue('#minted-key');
    check(/^agentd_[A-Za-z0-9_-]{43}$/.test(minted), `minted key: ${minted}`);
    const warning = await page.locator('#minted-secret .secret-warning').textContent();
    check(/shown once/.test(warning) && /hash/.test(warning), `warning: ${warning}`);
    await page.click('#minted-copy');
    await page.locator('#minted-copied', { hasText: 'Copied.' }).waitFor();
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    check(clip === minted, 'the clipboard does not hold the key');
    await page.locator('#principal-detail tr.key-row.live').waitFor();
    keyID = await page.locator('#principal-detail tr.key-row.live [data-key]').textContent();
    check(keyID.startsWith('key_'), `key id: ${keyID}`);
    const row = await page.locator('#principal-detail tr.key-row.live').textContent();
    check(row.includes('e2e laptop') && row.includes('by admin') && !row.includes(minted), `key row: ${row}`);
    check(await page.locator('#principals-list tr.principal-row', { hasText: 'ci-bot' }).locator('td').nth(5).textContent() === '1', 'the list does not count the live key');
    await shot('principals');
  });

  await step('the key works outside the browser, as ci-bot with ci-bot\'s rights', async () => {
    let r = await curl('GET', '/api/ui/session', minted);
    check(r.status === 200 && r.json.principal === 'ci-bot' && r.json.admin === false, `session as the minted key: ${r.status} ${r.text}`);
    r = await curl('POST', '/api/tools/agent_list/call', minted, {});
    check(r.status === 200, `ci-bot's tool with the minted key: ${r.status} ${r.text}`);
    r = await curl('GET', '/api/principals', minted);
    check(r.status === 403, `principals with ci-bot's minted key: ${r.status}`);
    r = await curl('GET', `/api/principals/ci-bot`, key);
    check(r.status === 200 && !r.text.includes(minted), 'the principal\'s answer shows the key');
  });

  await step('"Done" takes the key off the page for good', async () => {
    await page.click('#minted-done');
    check(await page.locator('#minted-secret').isHidden(), 'the secret card stayed');
    check(!(await page.content()).includes(minted), 'the key is still in the page');
    await page.reload();
    await page.locator('#principal-detail tr.key-row.live').waitFor();
    check(!(await page.content()).includes(minted), 'the key came back after a reload');
  });

  await step('revoking asks in the page; "Keep it" keeps the key', async () => {
    await page.click(`#principal-detail button[data-revoke="${keyID}"]`);
    const dialog = page.locator('dialog#confirm-dialog');
    await dialog.waitFor();
    check((await dialog.textContent()).includes(keyID), 'the confirmation does not name the key');
    await dialog.locator('button[data-confirm="no"]').click();
    await dialog.waitFor({ state: 'detached' });
    check((await curl('GET', '/api/sessions', minted)).status === 200, 'the key stopped working after "Keep it"');
    await page.locator('#principal-detail tr.key-row.live').waitFor();
  });

  await step('revoked, the key is refused by the very next request', async () => {
    await page.click(`#principal-detail button[data-revoke="${keyID}"]`);
    await page.locator('dialog#confirm-dialog').waitFor();
    await shot('principals-revoke');
    await page.locator('dialog#confirm-dialog button[data-confirm="yes"]').click();
    await page.locator('#principal-detail tr.key-row.revoked', { hasText: 'by admin' }).waitFor();
    const r = await curl('GET', '/api/sessions', minted);
    check(r.status === 401, `the revoked key: ${r.status} ${r.text}`);
    check(await page.locator('#principals-list tr.principal-row', { hasText: 'ci-bot' }).locator('td').nth(5).textContent() === '0', 'the list still counts the revoked key');
  });

  await step('audit: the tool filter takes a pattern or a part of a name, the principal filter a name', async () => {
    await go(page, '#/audit?tool=principals.*_key');
    await page.waitForFunction(() => document.querySelectorAll('#audit-results tr.audit-row').length === 2);
    const tools = await page.locator('#audit-results tr.audit-row td:nth-child(3)').allTextContents();
    check(tools.join(',') === 'principals.revoke_key,principals.mint_key', `audited: ${tools}`);
    await page.fill('#audit-filters input[name="tool"]', 'MINT');
    await page.waitForFunction(() => document.querySelectorAll('#audit-results tr.audit-row').length === 1);
    await page.fill('#audit-filters input[name="tool"]', 'agent_l?t');
    await page.locator('#audit-results .empty', { hasText: 'No call matches' }).waitFor();
    await page.fill('#audit-filters input[name="tool"]', 'agent_*');
    await page.locator('#audit-results tr.audit-row').first().waitFor();
    const before = await rows(page, '#audit-results tr.audit-row');
    check(before === 1, `agent_* rows: ${before}`);
    const names = await page.locator('#audit-principals option').evaluateAll((os) => os.map((o) => o.value));
    check(names.join(',') === 'admin,ci-bot', `principal suggestions: ${names}`);
    await page.fill('#audit-filters input[name="principal"]', 'admin');
    await page.locator('#audit-results .empty', { hasText: 'No call matches' }).waitFor();
    await page.fill('#audit-filters input[name="principal"]', 'ci-bot');
    await page.locator('#audit-results tr.audit-row', { hasText: 'ci-bot' }).waitFor();
    check(page.url().includes('principal=ci-bot') && page.url().includes('tool=agent_*'), `filters not in the URL: ${page.url()}`);
    await shot('audit-filters');
  });

  await step('a principal that is not an admin has no Principals page and sees its own audit records', async () => {
    const other = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    other.setDefaultTimeout(T);
    const p = await other.newPage();
    watch(p);
    await login(p, ciKey);
    await p.locator('.whoami', { hasText: 'ci-bot' }).waitFor();
    check(await p.locator('#nav-principals').count() === 0, 'the nav offers Principals to ci-bot');
    await go(p, '#/principals');
    await p.locator('#principals-list .error-box', { hasText: 'admins only' }).waitFor();
    await go(p, '#/audit');
    await p.locator('#audit-results tr.audit-row').first().waitFor();
    check(await p.locator('#audit-filters input[name="principal"]').isDisabled(), 'ci-bot can type a principal filter');
    const who = await p.locator('#audit-results tr.audit-row td:nth-child(8)').allTextContents();
    check(who.length > 0 && who.every((w) => w === 'ci-bot'), `ci-bot sees records of ${who}`);
    await other.close();
  });

  console.log('principals e2e: all steps passed');
} catch (e) {
  console.error(`FAIL ${current}: ${e.stack || e}`);
  const failure = join(tmpdir(), 'agentd-principals-failure.png');
  try { await page.screenshot({ path: failure, fullPage: true }); console.error(`screenshot of the failure: ${failure}`); } catch { /* browser gone */ }
  process.exitCode = 1;
} finally {
  await browser.close();
}
