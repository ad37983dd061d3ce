// Shared helpers of the browser tests and the measurement script: serve build-web/site/ on
// 127.0.0.1, drive Debian's chromium headless through playwright-core (never a downloaded
// browser), refuse every request that is not to the loopback server, call the native CLI.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const siteDir = process.env.TRAINCLOCK_SITE_DIR || join(repo, 'build-web/site');
export const cli = process.env.TRAINCLOCK_CLI || join(repo, 'build/bin/trainclock');
export const gui = process.env.TRAINCLOCK_GUI || join(repo, 'build/bin/trainclock-gui');

// Launch flags checked on Debian 12's chromium (WebGL2 through SwiftShader, no network).
const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];

async function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

// python3 -m http.server on a free loopback port; resolves once it answers.
export async function startServer(dir = siteDir) {
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`${dir}/index.html missing: run make web`);
  const port = await freePort();
  const child = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir],
    { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; ++i) {
    try {
      const response = await fetch(url);
      if (response.ok) return { url, close: () => child.kill() };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error('http.server did not start');
}

// A fresh browser with its own profile; every non-loopback request is aborted.
export async function startBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'trainclock-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs,
    viewport: { width: 1280, height: 800 }, permissions: ['clipboard-read', 'clipboard-write'],
  });
  await context.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname;
    return host === '127.0.0.1' ? route.continue() : route.abort();
  });
  return {
    context,
    close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); },
  };
}

// One server and one browser for a test file: registers the before/after hooks and returns an
// object whose `server` and `browser` are set once they run.
export function sharedBrowser() {
  const shared = { server: undefined, browser: undefined };
  before(async () => {
    shared.server = await startServer();
    shared.browser = await startBrowser();
  });
  after(async () => {
    await shared.browser?.close();
    shared.server?.close();
  });
  return shared;
}

// Time one browser test may take (node:test fails it past that): the slowest single test took 30 s on
// a loaded 2-core machine; searching ones and the walk over every control get 4x (testLimitMs * 4).
export const testLimitMs = 120000;

// The page's published state, named data, and its core API (JSON in and out).
export const view = (page) => page.evaluate(() => window.trainclockView);
export const data = (page, name) => page.evaluate((n) => (window.trainclockData || {})[n], name);
export const configOf = (page, fragment) => page.evaluate((f) => JSON.parse(window.trainclock.decodeLink(f)).config, fragment);
export const linkOf = (page, config) => page.evaluate((c) => JSON.parse(window.trainclock.encodeLink(JSON.stringify(c))).fragment,
  config);

// Waits until the page has drawn `count` more frames (window.trainclockFrames, counted by the page
// after each frame): an input sent before this call has been read by the app when it returns.
export async function frames(page, count = 1) {
  const start = await page.evaluate(() => window.trainclockFrames ?? 0);
  await page.waitForFunction(([s, n]) => (window.trainclockFrames ?? 0) >= s + n, [start, count], { polling: 'raf' });
}

// Waits until the page has computed everything it draws for its current state (the scaling plots
// are published last, once the precision chart above them is done), so the layout is final.
export async function settled(page, timeout = 60000) {
  await page.waitForFunction(() => {
    const shown = window.trainclockView?.fragment, done = window.trainclockData?.scaling?.fragment;
    return shown !== undefined && done !== undefined && (shown === done || shown.startsWith(done + '&pin=') || shown.startsWith(done + '&plan='));
  }, null, { timeout, polling: 'raf' });
}

// The screen rectangle of a published control once it has stayed put for two frames; throws if
// the page does not publish it. A control outside the inputs column of the wide layout (published
// as 'column.inputs') moves when the panels above it finish computing: the page settles first.
export async function controlRect(page, key) {
  const inInputs = await page.evaluate((k) => {
    const [c, r] = [window.trainclockView.controls['column.inputs'], window.trainclockView.controls[k]];
    return Boolean(c && r && r[0] >= c[0] && r[2] <= c[2] && r[1] >= c[1] && r[3] <= c[3]);
  }, key);
  if (!inInputs) await settled(page);
  const rect = await page.waitForFunction((k) => {
    const seen = (window.trainclockTestRects ??= {});
    const now = JSON.stringify(window.trainclockView.controls[k] ?? null), frame = window.trainclockFrames;
    const last = seen[k];
    if (!last || last.rect !== now) seen[k] = { rect: now, frame };
    else if (frame >= last.frame + 2) { delete seen[k]; return now; }
    return false;
  }, key, { polling: 'raf' });
  const value = JSON.parse(await rect.jsonValue());
  if (!value) throw new Error(`control ${key} is not published`);
  return value;
}

// Opens a config in a running page as a link and waits until the page shows it.
export async function showConfig(page, config) {
  const fragment = await linkOf(page, config);
  if (!fragment) throw new Error(`no link for ${JSON.stringify(config)}`);
  await openFragment(page, fragment);
  return fragment;
}

// Sets the URL fragment as a user's address-bar edit does and waits until the page shows it.
export async function openFragment(page, fragment) {
  await page.evaluate((f) => { location.hash = f; }, fragment);
  await page.waitForFunction((f) => window.trainclockView.fragment === f, fragment, { polling: 'raf' });
}

// Opens the site (optionally at a fragment), collects console errors, waits for the module and
// the first rendered frame with its published state.
export async function openApp(context, url, fragment = '') {
  const page = await context.newPage();
  // A page left open by a failed test would keep drawing and slow every later one (no test holds two).
  for (const other of context.pages()) if (other !== page) await other.close();
  const errors = [];
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(url + (fragment ? '#' + fragment : ''));
  await page.evaluate(() => window.trainclockReady.then(() => true));  // not the module itself: too big to serialise
  await page.waitForFunction(() => window.trainclockFirstFrameMs !== undefined && window.trainclockView !== undefined);
  return { page, errors };
}

// Distinct colours of a PNG (ImageMagick), the "not blank" measure.
export function colourCount(pngPath) {
  const out = spawnSync('/usr/bin/convert', [pngPath, '-format', '%k', 'info:'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return Number(out.stdout.trim());
}

export function writeTemp(name, bytes) {
  const dir = mkdtempSync(join(tmpdir(), 'trainclock-test-'));
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

// `trainclock predict --config - --json` on a config JSON string, or with the given flags.
export function nativePredict(configJson, flags = ['--config', '-']) {
  const out = spawnSync(cli, ['predict', ...flags, '--json'], { input: configJson, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`native predict failed (${out.status ?? out.signal ?? out.error}): ${out.stderr}`);
  return JSON.parse(out.stdout);
}

// `trainclock search --config - --json` (plus `flags`) on a config JSON string.
export function nativeSearch(configJson, flags = []) {
  const out = spawnSync(cli, ['search', '--config', '-', '--json', '--threads', '1', ...flags],
    { input: configJson, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`native search failed (${out.status ?? out.signal ?? out.error}): ${out.stderr}`);
  return JSON.parse(out.stdout);
}

// Clicks the middle of a published control rectangle (or `dx` px from its left edge).
export async function clickControl(page, key, dx) {
  const [x0, y0, x1, y1] = await controlRect(page, key);
  // Hover first, then press and release in separate frames, as a hand does (ImGui acts on release).
  await page.mouse.move(dx === undefined ? (x0 + x1) / 2 : x0 + dx, (y0 + y1) / 2);
  await frames(page);
  await page.mouse.down();
  await frames(page);
  await page.mouse.up();
  await frames(page);
}

// Ctrl+click turns an ImGui slider or input into a text field: type a value and press Enter.
export async function typeInto(page, key, text) {
  const [x0, y0, x1, y1] = await controlRect(page, key);
  await page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2);
  await frames(page);
  await page.keyboard.down('Control');
  await page.mouse.down();
  await frames(page);
  await page.mouse.up();
  await page.keyboard.up('Control');
  await page.waitForFunction((k) => window.trainclockData?.focus?.active === k, key, { polling: 'raf' });
  await page.keyboard.press('Control+A');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

// Every numeric/boolean/string leaf of `expected` (except the skipped top-level keys) must be
// identical in `actual`; returns a list of differences.
export function leafDifferences(expected, actual, skip = [], path = '') {
  const differences = [];
  if (expected !== null && typeof expected === 'object') {
    for (const key of Object.keys(expected)) {
      if (path === '' && skip.includes(key)) continue;
      const next = Array.isArray(expected) ? `${path}[${key}]` : (path ? `${path}.${key}` : key);
      if (actual === null || typeof actual !== 'object' || !(key in actual)) {
        differences.push(`${next}: missing`);
        continue;
      }
      differences.push(...leafDifferences(expected[key], actual[key], skip, next));
    }
  } else if (!Object.is(expected, actual)) {
    differences.push(`${path}: native ${expected} vs page ${actual}`);
  }
  return differences;
}

// Starts the app on a fresh X server, waits for it to draw, grabs the root window.
export function desktopScreenshot(path, { fragment = '', settle_s = 3 } = {}) {
  const script = 'if [ -n "$2" ]; then "$0" "#$2" & else "$0" & fi; app=$!; sleep "$3"; ' +
    '/usr/bin/import -window root "$1"; status=$?; kill $app; wait $app; exit $status';
  const run = spawnSync('xvfb-run', ['-a', '-s', '-screen 0 1280x800x24', 'sh', '-c', script, gui, path, fragment,
    String(settle_s)], { encoding: 'utf8', timeout: 60000 });
  if (run.status !== 0) throw new Error(`xvfb-run failed (${run.status}): ${run.stderr}`);
}
