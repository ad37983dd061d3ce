// `make web-report`: the figures of the web front end, measured on this machine.
//   - trainclock.wasm + trainclock.js size, raw and gzip (level 9);
//   - time from navigation start to the first rendered frame in headless chromium (median of 5);
//   - time of one predict() call in the page (JSON facade, Embind) vs native (same facade);
//   - wall time of full layout searches (issue 5), one thread, in the page's 4-cell slices without the
//     frame loop: natively (trainclock-search-timing) and as wasm under node (V8, the engine of
//     Chromium: build-web/tools/search_timing.js, the same source built by emscripten);
//   - screenshots of the web and desktop app into docs/screenshots/.
// Prints a table and writes build-web/web-report.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { cli, desktopScreenshot, openApp, repo, siteDir, startBrowser, startServer } from './lib.mjs';

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
// (seq 8192, 2048 sequences = 16M tokens, arXiv 2407.21783 Table 4).
const searchConfig = (model, gpu, gpus, seq, gbs) => JSON.stringify({
  schema: 'trainclock/config/v1', model, gpu, num_gpus: gpus, precision: 'bf16-mixed',
  training: { seq_len: seq, global_batch: gbs },
});
const searches = [
  { name: 'gpt3-175b, 1024 a100-sxm4-80gb, bf16-mixed', args: [searchConfig('gpt3-175b', 'a100-sxm4-80gb', 1024, 2048, 1536)] },
  { name: 'gpt3-175b, 1024 a100-sxm4-80gb, all precisions', args: [searchConfig('gpt3-175b', 'a100-sxm4-80gb', 1024, 2048, 1536), 'all'] },
  { name: 'llama3.1-405b, 16384 h100-sxm, bf16-mixed', args: [searchConfig('llama3.1-405b', 'h100-sxm', 16384, 8192, 2048)] },
];
const runSearch = (command, args) => {
  const result = spawnSync(command[0], [...command.slice(1), ...args], { encoding: 'utf8' });
  return result.status === 0 ? JSON.parse(result.stdout) : { error: (result.stderr || String(result.error)).trim() };
};

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
} finally {
  await browser.close();
  server.close();
}

const native = spawnSync(join(dirname(cli), 'trainclock-predict-timing'), [String(calls)], { input: config, encoding: 'utf8' });
if (native.status === 0) report.predict_us.native = JSON.parse(native.stdout).mean_us;
const wasmSearch = join(siteDir, '../tools/search_timing.js');
for (const { name, args } of searches) {
  report.search.push({
    name,
    native: runSearch([join(dirname(cli), 'trainclock-search-timing')], args),
    wasm_node: runSearch([process.execPath, wasmSearch], args),
  });
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
for (const { name, native: n, wasm_node: w } of report.search) {
  console.log(`search ${name}: native ${wall(n)}, wasm under node ${wall(w)} ` +
              `(${n.cells ?? w.cells} cells, ${n.predicted ?? w.predicted} predicted, one thread; best ${n.best ?? w.best})`);
}
console.log(`screenshots: docs/screenshots/web.png, ${report.desktop_screenshot}`);
writeFileSync(join(siteDir, '../web-report.json'), JSON.stringify(report, null, 2) + '\n');
