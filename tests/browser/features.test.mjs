// Browser tests of the plots, A/B comparison, export, keyboard and small viewports (issue 14), in
// headless Debian chromium against the native CLI. Run: `make test-web` (or `node --test` here).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { cli, clickControl, colourCount, typeInto, nativePredict, nativeSearch, openApp, startBrowser, startServer, writeTemp }
  from './lib.mjs';

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await startBrowser();
});

after(async () => {
  await browser?.close();
  server?.close();
});

// `trainclock search --config - --csv` lines.
function nativeCsv(configJson, flags) {
  const out = spawnSync(cli, ['search', '--config', '-', '--csv', '--threads', '1', ...flags], { input: configJson, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return out.stdout.trim().split('\n');
}
const view = (page) => page.evaluate(() => window.trainclockView);
const data = (page, name) => page.evaluate((n) => (window.trainclockData || {})[n], name);
const configOf = (page, fragment) => page.evaluate((f) => JSON.parse(window.trainclock.decodeLink(f)).config, fragment);
const linkOf = (page, config) => page.evaluate((c) => JSON.parse(window.trainclock.encodeLink(JSON.stringify(c))).fragment,
  config);
async function scalingFor(page, fragment) {
  await page.waitForFunction((f) => window.trainclockData?.scaling?.fragment === f, fragment, { timeout: 60000 });
  return data(page, 'scaling');
}
// The download a click on a published control starts, as text.
async function download(page, key) {
  const [file] = await Promise.all([page.waitForEvent('download'), clickControl(page, key)]);
  return { name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
}
describe('scaling plot', () => {
  it('its points equal `trainclock predict` at those GPU counts, and the page API returns the same', async () => {
    const { page, errors } = await openApp(browser.context, server.url);
    const { fragment } = await view(page);
    const scaling = await scalingFor(page, fragment);
    const base = await configOf(page, fragment);
    const counts = [...new Set(scaling.points.map((p) => p.num_gpus))];
    assert.deepEqual(counts, [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]);
    const api = JSON.parse(await page.evaluate((c) => window.trainclock.scaling(c), JSON.stringify(base)));
    assert.equal(api.points.length, scaling.points.length);
    const differences = [];
    let predicted = 0;
    for (const [i, point] of scaling.points.entries()) {
      const config = JSON.stringify({ ...base, num_gpus: point.num_gpus, precision: point.precision,
                                      parallel: { ...base.parallel, dp: 0 } });
      const apiPoint = api.points[i];
      assert.equal(apiPoint.num_gpus, point.num_gpus);
      assert.equal(apiPoint.precision, point.precision);
      if (point.error) {
        assert.throws(() => nativePredict(config), /native predict failed \(2\)/, `${point.num_gpus} ${point.precision}`);
        assert.ok(apiPoint.error);
        continue;
      }
      const native = nativePredict(config);
      ++predicted;
      const expected = { 'step time': native.iteration_time_s, 'total time': native.total_time_s,
                         cost: native.cost_usd, MFU: native.mfu };
      for (const [key, value] of Object.entries(expected))
        if (!Object.is(point[key], value)) differences.push(`${point.num_gpus} ${point.precision} ${key}: ${point[key]} vs ${value}`);
      if (!Object.is(apiPoint.iteration_time_s, native.iteration_time_s)) differences.push(`api ${i}`);
    }
    assert.deepEqual(differences, []);
    assert.ok(predicted >= 40, `${predicted} valid points`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('clicking a point applies that GPU count and precision', async () => {
    const { page } = await openApp(browser.context, server.url);
    await page.setViewportSize({ width: 1280, height: 1800 });
    const before = await view(page);
    await scalingFor(page, before.fragment);
    await page.waitForTimeout(200);
    // The bf16-mixed point at the fewest GPUs, placed as panels_plots.cpp places it: the plot area
    // is the plot's rectangle less 62 px of labels on the left, 6 px on the right and a 13 px text
    // line + 4 px above and below; log scales over the valid points.
    const scaling = await data(page, 'scaling');
    const [x0, y0, x1, y1] = (await view(page)).controls['scaling.step time'];
    const values = scaling.points.filter((p) => !p.error && p['step time'] > 0).map((p) => p['step time']);
    const [lo, hi] = [Math.min(...values), Math.max(...values)];
    const target = scaling.points.find((p) => p.num_gpus === 32 && p.precision === 'bf16-mixed');
    assert.ok(target && !target.error);
    const [top, bottom] = [y0 + 13 + 4, y1 - 13 - 4];
    const y = bottom - Math.log(target['step time'] / lo) / Math.log(hi / lo) * (bottom - top);
    await page.mouse.move(x0 + 62, y);
    await page.waitForTimeout(100);
    await page.mouse.click(x0 + 62, y);
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before.fragment);
    const changed = await view(page);
    assert.ok(x1 > x0);
    assert.ok(changed, 'a click on a point changes the state');
    const config = await configOf(page, changed.fragment);
    assert.equal(config.num_gpus, 32);
    await page.close();
  });
});

describe('search plot', () => {
  it('the Pareto points equal those of `search --json` at the GPU counts searched', async () => {
    const { page, errors } = await openApp(browser.context, server.url);
    await page.setViewportSize({ width: 1280, height: 2400 });
    const base = { schema: 'trainclock/config/v1', model: 'gpt3-1.3b', gpu: 'a100-sxm4-80gb', num_gpus: 8,
                   precision: 'bf16-mixed', parallel: { tp: 1, pp: 1, dp: 0 },
                   training: { seq_len: 2048, global_batch: 256, micro_batch: 1, tokens: 1e11 } };
    const expected = [];
    for (const gpus of [8, 32]) {
      const fragment = await linkOf(page, { ...base, num_gpus: gpus });
      await page.evaluate((f) => { location.hash = f; }, fragment);
      await page.waitForFunction((f) => window.trainclockView.fragment === f, fragment);
      await scalingFor(page, fragment);  // the panels above the search are drawn in full
      const count = (await data(page, 'search'))?.points.length ?? 0;
      await clickControl(page, 'search');
      await page.waitForFunction((n) => (window.trainclockData?.search?.points.length ?? 0) > n, count,
        { timeout: 240000, polling: 100 });
      const native = nativeSearch(JSON.stringify({ ...base, num_gpus: gpus }), ['--precision', 'all', '--widen', 'all']);
      for (const hit of native.top)
        expected.push({ num_gpus: gpus, precision: hit.precision, iteration_time_s: hit.result.iteration_time_s,
                        cost_usd: hit.result.cost_usd });
    }
    // The front by hand: no other point is at most as slow and as costly and better in one.
    const beats = (a, b) => a.iteration_time_s <= b.iteration_time_s && a.cost_usd <= b.cost_usd &&
      (a.iteration_time_s < b.iteration_time_s || a.cost_usd < b.cost_usd);
    const front = expected.filter((p) => !expected.some((q) => beats(q, p)));
    const key = (p) => `${p.num_gpus} ${p.precision} ${p.iteration_time_s} ${p.cost_usd}`;
    const points = (await data(page, 'search')).points;
    assert.deepEqual(points.map(key).sort(), expected.map(key).sort(), 'every point is a hit of search --json');
    assert.deepEqual(points.filter((p) => p.pareto).map(key).sort(), front.map(key).sort());
    assert.ok(new Set(front.map((p) => p.num_gpus)).size === 2, 'both GPU counts are on the front (time vs cost)');
    const shot = writeTemp('search.png', await page.locator('#canvas').screenshot());
    assert.ok(colourCount(shot) > 50);

    // Click the fastest point, placed as panels_plots.cpp places it (62 px of labels, 13 px text
    // lines, 8 % + 1 % padding); the tooltip names its layout.
    const [x0, y0, x1, y1] = (await view(page)).controls['search.plot'];
    const before = (await view(page)).fragment;
    const times = points.map((p) => p.iteration_time_s), costs = points.map((p) => p.cost_usd);
    const [t0, t1, c0, c1] = [Math.min(...times), Math.max(...times), Math.min(...costs), Math.max(...costs)];
    const padT = (t1 - t0) * 0.08 + t1 * 0.01, padC = (c1 - c0) * 0.08 + c1 * 0.01;
    const [fx0, fx1, fy0, fy1] = [Math.max(0, t0 - padT), t1 + padT, Math.max(0, c0 - padC), c1 + padC];
    const fastest = [...points].sort((a, b) => a.iteration_time_s - b.iteration_time_s || a.cost_usd - b.cost_usd)[0];
    const [left, right, top, bottom] = [x0 + 62, x1 - 6, y0 + 13 + 4, y1 - 13 - 4];
    const px = left + (fastest.iteration_time_s - fx0) / (fx1 - fx0) * (right - left);
    const py = bottom - (fastest.cost_usd - fy0) / (fy1 - fy0) * (bottom - top);
    await page.mouse.move(px, py);
    await page.waitForTimeout(100);
    await page.mouse.click(px, py);
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before);
    const applied = true;
    assert.ok(applied, 'a click on the fastest point applies its layout');
    assert.equal((await view(page)).result.iteration_time_s, fastest.iteration_time_s);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('A/B comparison', () => {
  it('pin, change, reload: both states are kept; unpin, reload: one state', async () => {
    const { page, errors } = await openApp(browser.context, server.url);
    const a = await view(page);
    await clickControl(page, 'ab.pin');
    await page.waitForFunction(() => window.trainclockView.fragment.includes('&pin='));
    await typeInto(page, 'parallel.tp', '4');
    await page.waitForFunction(() => /(^|&)tp=4(&|$)/.test(window.trainclockView.fragment));
    const b = await view(page);
    assert.notEqual(b.result.iteration_time_s, a.result.iteration_time_s);
    assert.deepEqual(await data(page, 'pinned'), { fragment: a.fragment });
    assert.equal(new URL(page.url()).hash, '#' + b.fragment);
    const shot = writeTemp('ab.png', await page.locator('#canvas').screenshot());
    assert.ok(colourCount(shot) > 50);

    await page.reload();
    await page.evaluate(() => window.trainclockReady.then(() => true));
    await page.waitForFunction(() => window.trainclockView !== undefined && window.trainclockData?.pinned !== undefined);
    const reloaded = await view(page);
    assert.equal(reloaded.fragment, b.fragment, 'B and the pin survive a reload');
    assert.equal(reloaded.result.iteration_time_s, b.result.iteration_time_s);
    assert.deepEqual(await data(page, 'pinned'), { fragment: a.fragment });

    await clickControl(page, 'ab.unpin');
    await page.waitForFunction(() => !window.trainclockView.fragment.includes('&pin='));
    await page.reload();
    await page.evaluate(() => window.trainclockReady.then(() => true));
    await page.waitForFunction(() => window.trainclockView !== undefined && window.trainclockData?.pinned !== undefined);
    assert.equal((await view(page)).fragment, b.fragment.split('&pin=')[0]);
    assert.equal(await data(page, 'pinned'), null);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a link with a corrupt pin opens B and says A could not be opened', async () => {
    const { page: first } = await openApp(browser.context, server.url);
    const { fragment } = await view(first);
    await first.close();
    const { page, errors } = await openApp(browser.context, server.url, fragment + '&pin=%%%');
    assert.match(await page.locator('#banner').textContent(), /pinned state \(A\)/);
    assert.equal((await view(page)).fragment, fragment);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('export', () => {
  it('result JSON, scaling CSV and search CSV hold what the page shows', async () => {
    const { page, errors } = await openApp(browser.context, server.url);
    await page.setViewportSize({ width: 1280, height: 2600 });
    const base = { schema: 'trainclock/config/v1', model: 'gpt3-1.3b', gpu: 'a100-sxm4-80gb', num_gpus: 16,
                   precision: 'bf16-mixed', parallel: { tp: 2, pp: 1, dp: 0 },
                   training: { seq_len: 2048, global_batch: 256, micro_batch: 1, tokens: 1e11 } };
    const fragment = await linkOf(page, base);
    await page.evaluate((f) => { location.hash = f; }, fragment);
    await page.waitForFunction((f) => window.trainclockView.fragment === f, fragment);
    const scaling = await scalingFor(page, fragment);
    await page.waitForTimeout(200);

    const result = await download(page, 'export.result');
    assert.equal(result.name, 'trainclock-result.json');
    const shown = (await view(page)).result;
    assert.deepEqual(JSON.parse(result.text), shown);
    assert.equal(JSON.parse(result.text).iteration_time_s, nativePredict(JSON.stringify(base)).iteration_time_s);

    const csv = (await download(page, 'export.scaling')).text.trim().split('\n');
    const header = csv[0].split(',');
    const column = (name) => header.indexOf(name);
    const valid = scaling.points.filter((p) => !p.error);
    assert.equal(csv.length - 1, valid.length, 'one row per valid point');
    for (const [i, line] of csv.slice(1).entries()) {
      const cells = line.split(',');
      assert.equal(Number(cells[column('num_gpus')]), valid[i].num_gpus);
      assert.equal(cells[column('precision')], valid[i].precision);
      assert.equal(Number(cells[column('iteration_time_s')]), valid[i]['step time']);
      assert.equal(Number(cells[column('cost_usd')]), valid[i].cost);
    }

    await clickControl(page, 'search');
    await page.waitForFunction(() => (window.trainclockData?.search?.points.length ?? 0) > 0, null, { timeout: 240000 });
    await page.waitForTimeout(200);
    const searchCsv = (await download(page, 'export.search')).text.trim().split('\n');
    const native = nativeCsv(JSON.stringify(base), ['--precision', 'all', '--widen', 'all']);
    assert.deepEqual(searchCsv, native, 'the search CSV is that of `trainclock search --csv`');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('keyboard and viewports', () => {
  it('Tab reaches the fields from the keyboard alone and typing there changes the state', async () => {
    const { page } = await openApp(browser.context, server.url);
    const before = await view(page);
    // Focus the inputs panel with a click beside a field (no control there), then Tab: the first
    // field (the GPU count) takes the keys, Enter commits.
    const [, y0, x1, y1] = before.controls.num_gpus;
    await page.mouse.click(x1 + 12, (y0 + y1) / 2);
    await page.waitForTimeout(500);
    await page.keyboard.press('Tab');
    await page.waitForTimeout(500);  // the focus moves on a later frame
    await page.keyboard.press('Control+A');
    await page.keyboard.type('512');
    await page.keyboard.press('Enter');
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before.fragment);
    const after = await view(page);
    assert.equal((await configOf(page, after.fragment)).num_gpus, 512);
    await page.close();
  });

  for (const [width, height] of [[1280, 720], [390, 844]]) {
    it(`usable at ${width}x${height}: every control inside the page width, no errors`, async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height });
      const errors = [];
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.goto(server.url);
      await page.waitForFunction(() => window.trainclockView !== undefined);
      await page.waitForTimeout(300);
      const { controls, result } = await view(page);
      assert.ok(result.iteration_time_s > 0);
      const outside = Object.entries(controls).filter(([, [x0, , x1]]) => x0 < 0 || x1 > width + 1);
      assert.deepEqual(outside, []);
      const shot = writeTemp(`view-${width}.png`, await page.locator('#canvas').screenshot());
      assert.ok(colourCount(shot) > 50);
      // A control works at this size: the model's GPU count field.
      const before = (await view(page)).fragment;
      await typeInto(page, 'num_gpus', '512');
      await page.waitForFunction((f) => window.trainclockView.fragment !== f, before);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});
