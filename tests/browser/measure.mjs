// `make web-report`: the figures of the web front end, measured on this machine.
//   - trainclock.wasm + trainclock.js size, raw and gzip (level 9);
//   - time from navigation start to the first rendered frame in headless chromium (median of 5);
//   - time of one predict() call in the page (JSON facade, Embind) vs native (same facade);
//   - wall time of full layout searches (issue 5), one thread, in the page's 4-cell slices without the
//     frame loop: natively (trainclock-search-timing) and as wasm under node (V8, the engine of
//     Chromium: build-web/tools/search_timing.js, the same source built by emscripten); and in the
//     page itself, run by its "Find the best layout" panel as a user runs it (pageSearch below);
//   - the scaling plot of 12 GPU counts x 11 precisions (llama3-70b on B200, which runs every
//     precision preset): the longest frame while the page computes it (a prediction at a time within
//     app.hpp's kFrameComputeBudgetS), in wall and CPU time, and the frame time with it drawn
//     (median), both against a 16 ms frame (scalingFrames below);
//   - CPU seconds Chromium spends on the settled default page over 20 s of no input (idleCpu below:
//     the page draws only a changed picture);
//   - screenshots of the web and desktop app into docs/screenshots/ (the plots, A/B, 1280x720, 390 px).
// Prints a table and writes build-web/web-report.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { cli, clickControl, desktopScreenshot, openApp, openFragment, repo, siteDir, startBrowser, startServer } from './lib.mjs';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

// The default state of the app (the README example).
const config = JSON.stringify({
  schema: 'trainclock/config/v1', model: 'llama3-70b', gpu: 'h100-sxm', num_gpus: 1024, precision: 'bf16-mixed',
  parallel: { tp: 8, pp: 4, dp: 0, sequence_parallel: true, zero: 1 },
  training: { seq_len: 8192, global_batch: 1024, micro_batch: 1, recompute: 'selective', flash_attention: true,
              tokens: 15e12 },
});
const calls = 2000;

// The searches of bench/bench_search.cpp: GPT-3 175B (seq 2048, 1536 sequences) and Llama 3.1 405B
// (seq 8192, 2048 sequences = 16M tokens, arXiv 2407.21783 Table 4). The search ignores the layout
// of its base; the page needs a valid one to open the link: the published ones (GPT-3 175B on 1024
// GPUs TP8 PP16, Narayanan et al. 2021 Table 1; Llama 3 TP8 PP16 DP128).
const searchConfig = (model, gpu, gpus, seq, gbs, parallel) => JSON.stringify({
  schema: 'trainclock/config/v1', model, gpu, num_gpus: gpus, precision: 'bf16-mixed', parallel,
  training: { seq_len: seq, global_batch: gbs },
});
const gpt3 = searchConfig('gpt3-175b', 'a100-sxm4-80gb', 1024, 2048, 1536, { tp: 8, pp: 16 });
const llama = searchConfig('llama3.1-405b', 'h100-sxm', 16384, 8192, 2048, { tp: 8, pp: 16, sequence_parallel: true });
const searches = [
  { name: 'gpt3-175b, 1024 a100-sxm4-80gb, bf16-mixed', config: gpt3, all: false },
  { name: 'gpt3-175b, 1024 a100-sxm4-80gb, all precisions', config: gpt3, all: true },
  { name: 'llama3.1-405b, 16384 h100-sxm, bf16-mixed', config: llama, all: false },
];
const runSearch = (command, args) => {
  const result = spawnSync(command[0], [...command.slice(1), ...args], { encoding: 'utf8' });
  return result.status === 0 ? JSON.parse(result.stdout) : { error: (result.stderr || String(result.error)).trim() };
};

// One search in the page, as a user runs it: the config opened as a link, "all precisions" set as
// asked (checked by default; its published rectangle is clicked to clear it, n/a on a page that
// does not publish it), a click on Search. Returns the wall time from the click to the finished
// ranking (the button's published rectangle changes with its label, Stop while running), and the
// search work in it: the time spent in the page's frame callbacks during the search less as many
// idle frames (median of those before and after; the page runs cells for up to 10 ms a frame and
// draws in between, so this is an estimate within a few ms per frame; the wall time also holds
// the drawing, slow on headless chromium's software GL).
async function pageSearch(context, url, { config, all }) {
  const { page, errors } = await openApp(context, url);
  const link = await page.evaluate((c) => JSON.parse(window.trainclock.encodeLink(c)), config);
  if (!link.fragment) return { error: JSON.stringify(link) };
  await openFragment(page, link.fragment);
  await page.setViewportSize({ width: 1280, height: 2400 });  // the panel is below the first 800 px
  await page.waitForFunction(() => (window.trainclockView.controls.search?.[3] ?? 1e9) < 2400);
  await page.waitForFunction((f) => window.trainclockData?.scaling?.fragment === f, link.fragment, { timeout: 60000 });
  const click = (key) => clickControl(page, key, key === 'search' ? undefined : 8);
  if (!all) {
    if (!(await page.evaluate(() => 'search.all_precisions' in window.trainclockView.controls))) {
      await page.close();
      return { error: 'this build does not publish the "all precisions" box' };
    }
    await click('search.all_precisions');
  }
  await page.evaluate(() => {
    const t = window.searchTiming = { widths: [], frames: [] };
    const width = (v) => v.controls.search[2] - v.controls.search[0];
    let view = window.trainclockView;
    t.idle = width(view);
    Object.defineProperty(window, 'trainclockView', {
      configurable: true, get: () => view, set: (v) => { view = v; t.widths.push([performance.now(), width(v)]); },
    });
    const raf = window.requestAnimationFrame.bind(window);  // emscripten's main loop asks for each frame
    window.requestAnimationFrame = (callback) => raf((stamp) => {
      const start = performance.now();
      callback(stamp);
      t.frames.push([start, performance.now() - start]);
    });
    document.getElementById('canvas').addEventListener('mouseup', () => { t.click = performance.now(); }, { capture: true });
  });
  await page.waitForTimeout(300);  // idle frames
  await click('search');
  await page.waitForFunction(() => {
    const t = window.searchTiming;
    const running = t.widths.findIndex(([, w]) => w !== t.idle);
    return running >= 0 && t.widths.slice(running).some(([, w]) => w === t.idle);
  }, null, { timeout: 300000, polling: 50 });
  await page.waitForTimeout(300);  // idle frames, the ranking drawn
  const t = await page.evaluate(() => window.searchTiming);
  await page.close();
  const running = t.widths.findIndex(([, w]) => w !== t.idle);
  const end = t.widths.slice(running).find(([, w]) => w === t.idle)[0];
  const idleMs = median(t.frames.filter(([start]) => start < t.click || start > end).map(([, ms]) => ms));
  const during = t.frames.filter(([start]) => start >= t.click && start < end);
  const busyMs = during.reduce((sum, [, ms]) => sum + ms, 0);
  return { wall_ms: end - t.click, search_ms: busyMs - during.length * idleMs, frames: during.length,
           idle_frame_ms: idleMs, longest_frame_ms: Math.max(...during.map(([, ms]) => ms)), errors };
}

// Frame times around a recomputation of the scaling plot: the config opened as a link in a running
// page; every frame callback timed from the hash change until the plot's points are published,
// then 60 frames with the plot drawn. Wall time (performance.now() around each callback) holds
// whatever else the machine ran meanwhile (a loaded 2-core machine takes the page's thread away
// for 4-30 ms at a time); CPU time (the thread time of chromium's FireAnimationFrame trace events)
// is the page's own work. The page is opened `runs` times; each run's longest frame is kept.
async function scalingFrames(context, url, runs = 5) {
  const base = { schema: 'trainclock/config/v1', model: 'llama3-70b', gpu: 'b200', num_gpus: 1024, precision: 'bf16-mixed',
                 parallel: { tp: 8, pp: 4, dp: 0, sequence_parallel: true, zero: 1 },
                 training: { seq_len: 8192, global_batch: 1024, micro_batch: 1, recompute: 'selective', tokens: 15e12 } };
  const result = { runs: [] };
  for (let run = 0; run < runs; ++run) {
    const { page } = await openApp(context, url);
    await page.setViewportSize({ width: 1280, height: 1600 });
    const fragment = await page.evaluate((c) => JSON.parse(window.trainclock.encodeLink(JSON.stringify(c))).fragment, base);
    await page.evaluate((f) => {
      const t = window.scalingTiming = { frames: [] };
      const raf = window.requestAnimationFrame.bind(window);
      window.requestAnimationFrame = (callback) => raf((stamp) => {
        const start = performance.now();
        callback(stamp);
        const done = window.trainclockData?.scaling?.fragment === f;
        t.frames.push([start, performance.now() - start, done]);
        if (done && t.done === undefined) {
          t.done = performance.now();
          console.timeStamp('trainclock-scaling-done');  // in the trace: the end of the window
        }
      });
    }, fragment);
    const cdp = await context.newCDPSession(page);
    const events = [];
    cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
    const traced = new Promise((ok) => cdp.once('Tracing.tracingComplete', ok));
    await cdp.send('Tracing.start', { traceConfig: { includedCategories: ['devtools.timeline'] }, transferMode: 'ReportEvents' });
    await page.waitForTimeout(300);
    const start = await page.evaluate((f) => {
      console.timeStamp('trainclock-scaling-start');
      const now = performance.now();
      location.hash = f;
      return now;
    }, fragment);
    // Polled on a timer: a 'raf' poll would add frame callbacks of its own to the trace.
    await page.waitForFunction(() => window.scalingTiming.done !== undefined, null, { timeout: 60000, polling: 50 });
    await page.waitForTimeout(1200);
    await cdp.send('Tracing.end');
    await traced;
    await cdp.detach();
    const t = await page.evaluate(() => window.scalingTiming);
    const scaling = await page.evaluate(() => window.trainclockData.scaling);
    await page.close();
    const stamp = (m) => events.find((e) => e.name === 'TimeStamp' && e.args?.data?.message === m)?.ts;
    const [t0, t1] = [stamp('trainclock-scaling-start'), stamp('trainclock-scaling-done')];
    const cpu = events.filter((e) => e.name === 'FireAnimationFrame' && e.ph === 'X' && e.ts >= t0 && e.ts <= t1)
      .map((e) => e.tdur / 1000);
    const computing = t.frames.filter(([s, , done]) => s >= start && s <= t.done).map(([, ms]) => ms);
    const drawn = t.frames.filter(([s]) => s > t.done).map(([, ms]) => ms);
    result.runs.push({ compute_frames: computing.length, longest_compute_frame_ms: Math.max(...computing),
                       longest_compute_frame_cpu_ms: cpu.length ? Math.max(...cpu) : undefined,
                       drawn_frame_ms: median(drawn), wall_ms: t.done - start });
    result.counts = new Set(scaling.points.map((p) => p.num_gpus)).size;
    result.precisions = new Set(scaling.points.map((p) => p.precision)).size;
  }
  const pick = (key) => result.runs.map((r) => r[key]);
  result.longest_compute_frame_ms = median(pick('longest_compute_frame_ms'));
  result.longest_compute_frame_cpu_ms = median(pick('longest_compute_frame_cpu_ms'));
  result.drawn_frame_ms = median(pick('drawn_frame_ms'));
  result.compute_frames = median(pick('compute_frames'));
  result.wall_ms = median(pick('wall_ms'));
  return result;
}

// Screenshots of the new views (issue 14) into docs/screenshots/.
async function viewScreenshots(context, url) {
  const dir = join(repo, 'docs/screenshots');
  const shots = [];
  // The union of the published rectangles of `keys`, from `left` (default: their left edge) to the
  // right edge of the page (a group's rectangle may end before its table's columns), or to `right`.
  const clipKeys = async (page, keys, name, { pad = 6, left, right, top = 0 } = {}) => {
    const rects = await page.evaluate((ks) => ks.map((k) => window.trainclockView.controls[k]), keys);
    if (rects.some((r) => !r)) throw new Error(`screenshot ${name}: ${keys} not all published`);
    const x0 = left ?? Math.min(...rects.map((r) => r[0])) - pad, y0 = Math.min(...rects.map((r) => r[1])) - pad - top;
    const x1 = right ?? (page.viewportSize()?.width ?? 1280) - 12, y1 = Math.max(...rects.map((r) => r[3])) + pad;
    await page.screenshot({ path: join(dir, name), clip: { x: Math.max(0, x0), y: Math.max(0, y0), width: x1 - Math.max(0, x0),
                                                          height: y1 - Math.max(0, y0) } });
    shots.push(`docs/screenshots/${name}`);
  };
  const clip = (page, key, name) => clipKeys(page, [key], name);
  const { page } = await openApp(context, url);
  await page.setViewportSize({ width: 1280, height: 2400 });
  await page.waitForFunction(() => window.trainclockData?.scaling?.fragment === window.trainclockView.fragment);
  await page.waitForTimeout(400);
  await clip(page, 'panel.scaling', 'scaling.png');
  // A/B: pin, then switch to FP8 with sequence parallelism off.
  const click = (key, dx) => clickControl(page, key, dx);
  await click('ab.pin');
  await page.waitForFunction(() => window.trainclockView.fragment.includes('&pin='));
  await click('parallel.sequence_parallel', 8);
  await page.waitForFunction(() => window.trainclockData?.scaling?.fragment === window.trainclockView.fragment.split('&pin=')[0]);
  await page.waitForTimeout(400);
  await clip(page, 'panel.ab', 'ab.png');
  await click('ab.unpin');
  await page.waitForFunction(() => !window.trainclockView.fragment.includes('&pin='));
  // A search at 8 and at 32 GPUs of one run: the time/cost points and their Pareto front.
  const run = { schema: 'trainclock/config/v1', model: 'gpt3-1.3b', gpu: 'a100-sxm4-80gb', num_gpus: 8,
                precision: 'bf16-mixed', parallel: { tp: 1, pp: 1, dp: 0 },
                training: { seq_len: 2048, global_batch: 256, micro_batch: 1, tokens: 1e11 } };
  for (const gpus of [8, 32]) {
    const fragment = await page.evaluate((c) => JSON.parse(window.trainclock.encodeLink(JSON.stringify(c))).fragment,
      { ...run, num_gpus: gpus });
    await openFragment(page, fragment);
    await page.waitForFunction((f) => window.trainclockData?.scaling?.fragment === f, fragment, { timeout: 60000 });
    const count = await page.evaluate(() => window.trainclockData?.search?.points.length ?? 0);
    await click('search');
    await page.waitForFunction((n) => (window.trainclockData?.search?.points.length ?? 0) > n, count, { timeout: 240000 });
  }
  await page.waitForTimeout(400);
  await clip(page, 'panel.search_plot', 'search-plot.png');
  await page.close();
  await inputScreenshots(context, url, clipKeys);
  for (const [width, height] of [[1280, 720], [390, 844]]) {
    const small = await context.newPage();
    await small.setViewportSize({ width, height });
    await small.goto(url);
    await small.waitForFunction(() => window.trainclockView !== undefined);
    await small.waitForTimeout(500);
    await small.screenshot({ path: join(dir, `web-${width}x${height}.png`) });
    shots.push(`docs/screenshots/web-${width}x${height}.png`);
    await small.close();
  }
  return shots;
}

// The inputs issue 14 added (software stack, fine-tuning, whole run, FP8 recipe), the import box
// after a pasted HF config.json, and the likely-range whiskers.
async function inputScreenshots(context, url, clipKeys) {
  const { page } = await openApp(context, url);
  await page.setViewportSize({ width: 1280, height: 2400 });
  const config = { schema: 'trainclock/config/v1', model: 'llama3-70b', gpu: 'h100-sxm', num_gpus: 1024, precision: 'fp8-mixed',
                   framework: 'megatron-core', parallel: { tp: 8, pp: 4, dp: 0, sequence_parallel: true, zero: 1 },
                   training: { seq_len: 8192, global_batch: 1024, recompute: 'selective', tokens: 15e12,
                               finetune: { method: 'lora', lora_rank: 16 }, checkpoint_interval_s: 1800 } };
  const fragment = await page.evaluate((c) => JSON.parse(window.trainclock.encodeLink(JSON.stringify(c))).fragment, config);
  await openFragment(page, fragment);
  await page.waitForTimeout(400);
  await clipKeys(page, ['framework', 'precision.fp8_recipe'], 'inputs.png', { left: 0, right: 560, top: 22 });
  await clipKeys(page, ['interval.step', 'interval.total'], 'interval.png', { top: 20 });
  await clickControl(page, 'import');
  await page.waitForFunction(() => 'import.button' in window.trainclockView.controls);
  const hf = readFileSync(join(repo, 'tests/core/hf/mistral-7b.json'), 'utf8');
  await page.evaluate((t) => {
    const transfer = new DataTransfer();
    transfer.setData('text/plain', t);
    document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true }));
  }, hf);
  await page.waitForFunction((f) => window.trainclockView.fragment !== f, fragment);
  await page.waitForTimeout(400);
  await clipKeys(page, ['import', 'model'], 'import.png', { left: 0, right: 560 });
  await page.close();

}

// CPU seconds of every chromium process (ps cumulative time), for the idle measurement.
const chromiumCpuS = () => spawnSync('ps', ['-eo', 'comm,times', '--no-headers'], { encoding: 'utf8' }).stdout.split('\n')
  .filter((line) => /chrom/i.test(line)).reduce((sum, line) => sum + Number(line.trim().split(/\s+/).pop() || 0), 0);

// The default page once computed, left alone for 20 s: Chromium's CPU seconds and the app's loop iterations.
async function idleCpu(context, url) {
  const { page } = await openApp(context, url);
  await page.waitForTimeout(5000);  // the sliced plots and comparison finish
  const [cpu0, frames0] = [chromiumCpuS(), await page.evaluate(() => window.trainclockFrames)];
  await page.waitForTimeout(20000);
  const result = { seconds: 20, cpu_s: chromiumCpuS() - cpu0, frames: (await page.evaluate(() => window.trainclockFrames)) - frames0 };
  await page.close();
  return result;
}

const report = { sizes: {}, first_frame_ms: [], predict_us: {}, search: [] };
for (const file of ['trainclock.wasm', 'trainclock.js']) {
  const bytes = readFileSync(join(siteDir, file));
  report.sizes[file] = { raw: statSync(join(siteDir, file)).size, gzip: gzipSync(bytes, { level: 9 }).length };
}
report.sizes.total = {
  raw: report.sizes['trainclock.wasm'].raw + report.sizes['trainclock.js'].raw,
  gzip: report.sizes['trainclock.wasm'].gzip + report.sizes['trainclock.js'].gzip,
};

const server = await startServer();
const browser = await startBrowser();
try {
  for (let i = 0; i < 5; ++i) {
    const { page } = await openApp(browser.context, server.url);
    report.first_frame_ms.push(await page.evaluate(() => window.trainclockFirstFrameMs));
    if (i === 4) {
      report.predict_us.page = await page.evaluate(([c, n]) => {
        window.trainclock.predict(c);  // warm-up
        const start = performance.now();
        let bytes = 0;
        for (let k = 0; k < n; ++k) bytes += window.trainclock.predict(c).length;
        return (performance.now() - start) * 1000 / n + (bytes < 0 ? 1 : 0);
      }, [config, calls]);
      mkdirSync(join(repo, 'docs/screenshots'), { recursive: true });
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(repo, 'docs/screenshots/web.png') });
    }
    await page.close();
  }
  report.idle = await idleCpu(browser.context, server.url);
  report.scaling = await scalingFrames(browser.context, server.url);
  report.screenshots = await viewScreenshots(browser.context, server.url);
  for (const search of searches) report.search.push({ name: search.name, page: await pageSearch(browser.context, server.url, search) });
} finally {
  await browser.close();
  server.close();
}

const native = spawnSync(join(dirname(cli), 'trainclock-predict-timing'), [String(calls)], { input: config, encoding: 'utf8' });
if (native.status === 0) report.predict_us.native = JSON.parse(native.stdout).mean_us;
const wasmSearch = join(siteDir, '../tools/search_timing.js');
for (const [i, { config, all }] of searches.entries()) {
  const args = all ? [config, 'all'] : [config];
  report.search[i].native = runSearch([join(dirname(cli), 'trainclock-search-timing')], args);
  report.search[i].wasm_node = runSearch([process.execPath, wasmSearch], args);
}
try {
  desktopScreenshot(join(repo, 'docs/screenshots/desktop.png'));
  report.desktop_screenshot = 'docs/screenshots/desktop.png';
} catch (error) {
  report.desktop_screenshot = `failed: ${error.message}`;
}

const s = report.sizes;
console.log(`wasm   ${kib(s['trainclock.wasm'].raw)} raw, ${kib(s['trainclock.wasm'].gzip)} gzip`);
console.log(`js     ${kib(s['trainclock.js'].raw)} raw, ${kib(s['trainclock.js'].gzip)} gzip`);
console.log(`total  ${kib(s.total.raw)} raw, ${kib(s.total.gzip)} gzip (budget 1.5 MB gzip)`);
console.log(`first frame after navigation: median ${median(report.first_frame_ms).toFixed(0)} ms ` +
            `(runs: ${report.first_frame_ms.map((v) => v.toFixed(0)).join(', ')}; budget 1500 ms)`);
console.log(`predict (JSON in/out, ${calls} calls): page ${report.predict_us.page.toFixed(1)} us, ` +
            `native ${report.predict_us.native?.toFixed(1) ?? 'n/a'} us (budget: well under a 16 ms frame)`);
const wall = (r) => (r.wall_s !== undefined ? `${(r.wall_s * 1000).toFixed(0)} ms` : `n/a (${r.error})`);
const inPage = (p) => (p.wall_ms !== undefined
  ? `${p.search_ms.toFixed(0)} ms of search work (${p.wall_ms.toFixed(0)} ms wall with drawing, ${p.frames} frames, ` +
    `longest ${p.longest_frame_ms.toFixed(0)} ms)`
  : `n/a (${p.error})`);
for (const { name, native: n, wasm_node: w, page: p } of report.search) {
  console.log(`search ${name}: native ${wall(n)}, wasm under node ${wall(w)}, in the page ${inPage(p)} ` +
              `(${n.cells ?? w.cells} cells, ${n.predicted ?? w.predicted} predicted, one thread; best ${n.best ?? w.best})`);
}
const sc = report.scaling;
const runsOf = (key) => sc.runs.map((r) => r[key]?.toFixed(1) ?? 'n/a').join(', ');
console.log(`scaling plot (${sc.counts} GPU counts x ${sc.precisions} precisions, median of ${sc.runs.length} runs): computed over ` +
            `${sc.compute_frames} frames (${sc.wall_ms.toFixed(0)} ms), longest frame ${sc.longest_compute_frame_ms.toFixed(1)} ms wall ` +
            `(runs: ${runsOf('longest_compute_frame_ms')}), ${sc.longest_compute_frame_cpu_ms?.toFixed(1) ?? 'n/a'} ms CPU ` +
            `(runs: ${runsOf('longest_compute_frame_cpu_ms')}); frame with the plot drawn ${sc.drawn_frame_ms.toFixed(1)} ms ` +
            `(median; budget 16 ms)`);
console.log(`idle page: chromium ${report.idle.cpu_s} CPU s over ${report.idle.seconds} s without input ` +
            `(${report.idle.frames} loop iterations; an unchanged picture is not redrawn)`);
console.log(`screenshots: docs/screenshots/web.png, ${report.screenshots.join(', ')}, ${report.desktop_screenshot}`);
writeFileSync(join(siteDir, '../web-report.json'), JSON.stringify(report, null, 2) + '\n');
