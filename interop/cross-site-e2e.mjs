// Attacks on a key-less daemon from other origins, in a real headless
// Chromium (internal/webui/e2e runs this): a page on another site posts
// "simple" cross-site requests (text/plain and type-less bodies, no
// preflight) to the A2A and API routes that run an agent, and a page
// whose host name is rebound to the daemon's address (DNS rebinding)
// tries to read sessions and run the agent same-origin. The Go test
// checks that the requests arrived and that nothing ran; this script
// reports what the rebound page could see.
import { chromium } from 'playwright-core';

const attacker = process.env.ATTACKER_URL; // http://localhost:A/
const rebind = process.env.REBIND_URL;     // http://rebind.test:P/
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--host-resolver-rules=MAP rebind.test 127.0.0.1'],
});
const page = await browser.newPage();
page.setDefaultTimeout(30_000);

await page.goto(attacker);
await page.waitForFunction(() => document.title === 'cross-site: sent');
console.log('cross-site page: every request sent');

await page.goto(rebind);
await page.waitForFunction(() => document.title.startsWith('rebind: '), null, { timeout: 60_000 });
const seen = JSON.parse((await page.title()).slice('rebind: '.length));
console.log('rebound page saw ' + JSON.stringify(seen));
await browser.close();
