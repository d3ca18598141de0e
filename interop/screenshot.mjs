// screenshot.mjs renders a local HTML file with Chromium (playwright-core)
// and saves a PNG of it, cut to the page's content: how the trace picture
// in docs/observability.md is made from TestTraceAcrossProtocols's
// -trace-html output.
//
// Usage: node screenshot.mjs IN.html OUT.png   (CHROMIUM overrides /usr/bin/chromium)
import { chromium } from 'playwright-core';
import { resolve } from 'node:path';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node screenshot.mjs IN.html OUT.png');
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1120, height: 400 }, deviceScaleFactor: 2 });
  await page.goto('file://' + resolve(input));
  await page.screenshot({ path: output, fullPage: true });
} finally {
  await browser.close();
}
