// Browser tests of the plots, A/B comparison, export, keyboard and small viewports (issue 14), in
// headless Debian chromium against the native CLI. Run: `make test-web` (or `node --test` here).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { cli, clickControl, controlRect, frames, openFragment, colourCount, configOf, data, linkOf, nativePredict, nativeSearch, openApp,
  settled, sharedBrowser, showConfig, testLimitMs as LIMIT_MS, typeInto, view, writeTemp } from './lib.mjs';

const shared = sharedBrowser();

// `trainclock search --config - --csv` lines.
function nativeCsv(configJson, flags) {
  const out = spawnSync(cli, ['search', '--config', '-', '--csv', '--threads', '1', ...flags], { input: configJson, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return out.stdout.trim().split('\n');
}
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
  it('its points and likely-range bands equal `trainclock predict` at those GPU counts, and the page API returns the same',
     { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const { fragment } = await view(page);
    const scaling = await scalingFor(page, fragment);
    const base = await configOf(page, fragment);
    const counts = [...new Set(scaling.points.map((p) => p.num_gpus))];
    assert.deepEqual(counts, [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]);
    const api = JSON.parse(await page.evaluate((c) => window.trainclock.scaling(c), JSON.stringify(base)));
    assert.equal(api.points.length, scaling.points.length);
    const differences = [];
    let predicted = 0, banded = 0;
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
      // The band of step and total time: the result's likely range (*_low/*_high) at that count.
      const expected = { 'step time': native.iteration_time_s, 'total time': native.total_time_s,
                         cost: native.cost_usd, MFU: native.mfu,
                         'step time low': native.iteration_time_s_low, 'step time high': native.iteration_time_s_high,
                         'total time low': native.total_time_s_low, 'total time high': native.total_time_s_high };
      if (point.precision === base.precision) {
        assert.ok(native.iteration_time_s_low < native.iteration_time_s && native.iteration_time_s < native.iteration_time_s_high);
        ++banded;
      }
      for (const [key, value] of Object.entries(expected))
        if (!Object.is(point[key], value)) differences.push(`${point.num_gpus} ${point.precision} ${key}: ${point[key]} vs ${value}`);
      if (!Object.is(apiPoint.iteration_time_s, native.iteration_time_s)) differences.push(`api ${i}`);
    }
    assert.deepEqual(differences, []);
    assert.ok(predicted >= 40, `${predicted} valid points`);
    assert.ok(banded >= 10, `${banded} points of the current precision (${base.precision}) with a band`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('clicking a point applies that GPU count and precision', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    await page.setViewportSize({ width: 1280, height: 1800 });
    const before = await view(page);
    await scalingFor(page, before.fragment);
    // The bf16-mixed point at the fewest GPUs, placed by the plot's published area and ranges
    // (plot.hpp: log scales over the valid points).
    const scaling = await data(page, 'scaling');
    const [x0, , x1] = await controlRect(page, 'scaling.step time');
    const plot = (await data(page, 'plots'))['scaling.step time'];
    const [left, top, , bottom] = plot.area;
    const [lo, hi] = plot.y.range;
    const target = scaling.points.find((p) => p.num_gpus === 32 && p.precision === 'bf16-mixed');
    assert.ok(target && !target.error);
    const y = bottom - Math.log(target['step time'] / lo) / Math.log(hi / lo) * (bottom - top);
    await page.mouse.move(left, y);
    await frames(page);
    await page.mouse.click(left, y);
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
  it('the Pareto points equal those of `search --json` at the GPU counts searched', { timeout: 4 * LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    await page.setViewportSize({ width: 1280, height: 2400 });
    const base = { schema: 'trainclock/config/v1', model: 'gpt3-1.3b', gpu: 'a100-sxm4-80gb', num_gpus: 8,
                   precision: 'bf16-mixed', parallel: { tp: 1, pp: 1, dp: 0 },
                   training: { seq_len: 2048, global_batch: 256, micro_batch: 1, tokens: 1e11 } };
    const expected = [];
    for (const gpus of [8, 32]) {
      const fragment = await linkOf(page, { ...base, num_gpus: gpus });
      await openFragment(page, fragment);
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

    // Click the fastest point, placed by the plot's published area and ranges (plot.hpp); the
    // tooltip names its layout.
    const before = (await view(page)).fragment;
    await controlRect(page, 'search.plot');  // in place (stayed put for two frames)
    const plot = (await data(page, 'plots'))['search.plot'];
    const [left, top, right, bottom] = plot.area;
    const [[fx0, fx1], [fy0, fy1]] = [plot.x.range, plot.y.range];
    const fastest = [...points].sort((a, b) => a.iteration_time_s - b.iteration_time_s || a.cost_usd - b.cost_usd)[0];
    const pixel = (p) => [left + (p.iteration_time_s - fx0) / (fx1 - fx0) * (right - left),
                          bottom - (p.cost_usd - fy0) / (fy1 - fy0) * (bottom - top)];
    const [px, py] = pixel(fastest);
    await page.mouse.move(px, py);
    await frames(page);
    await page.mouse.click(px, py);
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before);
    // Points within a marker's radius of the click share its pixel (bf16 and fp16 a few 1e-4 apart):
    // the page applies one of them.
    const underClick = points.filter((p) => Math.hypot(pixel(p)[0] - px, pixel(p)[1] - py) <= 3)
      .map((p) => p.iteration_time_s);
    assert.ok(underClick.includes((await view(page)).result.iteration_time_s), 'the applied layout is a point under the click');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('A/B comparison', () => {
  it('pin, change, reload: both states are kept; unpin, reload: one state', { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
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

  it('a link with a corrupt pin opens B and says A could not be opened', { timeout: LIMIT_MS }, async () => {
    const { page: first } = await openApp(shared.browser.context, shared.server.url);
    const { fragment } = await view(first);
    await first.close();
    const { page, errors } = await openApp(shared.browser.context, shared.server.url, fragment + '&pin=%%%');
    assert.match(await page.locator('#banner').textContent(), /pinned state \(A\)/);
    assert.equal((await view(page)).fragment, fragment);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('export', () => {
  it('result JSON, scaling CSV and search CSV hold what the page shows', { timeout: 4 * LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    await page.setViewportSize({ width: 1280, height: 2600 });
    const base = { schema: 'trainclock/config/v1', model: 'gpt3-1.3b', gpu: 'a100-sxm4-80gb', num_gpus: 16,
                   precision: 'bf16-mixed', parallel: { tp: 2, pp: 1, dp: 0 },
                   training: { seq_len: 2048, global_batch: 256, micro_batch: 1, tokens: 1e11 } };
    const fragment = await linkOf(page, base);
    await openFragment(page, fragment);
    const scaling = await scalingFor(page, fragment);

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
    const searchCsv = (await download(page, 'export.search')).text.trim().split('\n');
    const native = nativeCsv(JSON.stringify(base), ['--precision', 'all', '--widen', 'all']);
    assert.deepEqual(searchCsv, native, 'the search CSV is that of `trainclock search --csv`');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('keyboard and viewports', () => {
  it('Tab reaches the fields from the keyboard alone and typing there changes the state', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    const before = await view(page);
    // Focus the inputs panel with a click beside a field (no control there), then Tab: the first
    // field (the GPU count) becomes the active one (published by the page each frame), takes the
    // keys, Enter commits. Waits are on the published state, never on a fixed time (a loaded
    // machine draws a frame late).
    const [, y0, x1, y1] = before.controls.num_gpus;
    const active = () => page.evaluate(() => window.trainclockData?.focus?.active ?? '');
    // Up to three tries: a loaded machine's long frame can leave the focus click unread.
    for (let i = 0; i < 3 && (await active()) !== 'num_gpus'; ++i) {
      // The click and the Tab are each held for two frames: a press whose down and up reach the app
      // in one frame is lost to ImGui's input state (the SDL backend records only what is down).
      await page.mouse.move(x1 + 12, (y0 + y1) / 2);
      await page.mouse.down();
      await frames(page, 2);
      await page.mouse.up();
      await frames(page, 1);
      await page.waitForFunction(() => window.trainclockData?.focus?.active === '', null, { timeout: 20000 });
      await page.keyboard.down('Tab');
      await frames(page, 2);
      await page.keyboard.up('Tab');
      await page.waitForFunction(() => window.trainclockData?.focus?.active === 'num_gpus', null, { timeout: 8000 }).catch(() => {});
    }
    assert.equal(await active(), 'num_gpus');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('512');
    await page.keyboard.press('Enter');
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before.fragment, { timeout: 20000 });
    const after = await view(page);
    assert.equal((await configOf(page, after.fragment)).num_gpus, 512);
    await page.close();
  });

  for (const [width, height] of [[1280, 720], [390, 844]]) {
    it(`usable at ${width}x${height}: every control inside the page width, no errors`, { timeout: LIMIT_MS }, async () => {
      const page = await shared.browser.context.newPage();
      await page.setViewportSize({ width, height });
      const errors = [];
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.goto(shared.server.url);
      await page.waitForFunction(() => window.trainclockView !== undefined);
      await settled(page);
      await frames(page, 2);
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

// ---- Controls of the stack, fine-tuning and whole-run keys; import by paste or drop ------------

// The words of "Copy CLI command" (single-quoted words as the page quotes them), run natively.
function shellWords(command) {
  const words = [];
  for (const match of command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g))
    words.push(match[1] !== undefined ? match[1].replaceAll("'\\''", "'") : match[2]);
  return words;
}
function runCommand(command) {
  const words = shellWords(command);
  assert.equal(words[0], 'trainclock');
  const out = spawnSync(cli, [...words.slice(1), '--json'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`${command}: ${out.stderr}`);
  return JSON.parse(out.stdout);
}
async function cliOf(page) {
  await page.waitForFunction(() => window.trainclockData?.cli !== undefined);
  return (await data(page, 'cli')).command;
}
// Waits until the state (fragment and CLI command) moved on from `before`, then returns it.
async function changed(page, before) {
  await page.waitForFunction((f) => window.trainclockView.fragment !== f && window.trainclockData?.cli?.command.length > 0,
    before.fragment, { timeout: 20000 });
  return { ...(await view(page)), command: await cliOf(page) };
}
// Opens a combo by its published rectangle and clicks one of its published items ("key=name").
async function pick(page, key, item) {
  await clickControl(page, key);
  await page.waitForFunction((k) => k in window.trainclockView.controls, `${key}=${item}`, { timeout: 20000 });
  await clickControl(page, `${key}=${item}`);
}

describe('stack, fine-tuning and whole-run controls', () => {
  // A run every new control applies to: 4 pipeline stages (uneven splits), FP8 GEMMs (recipes),
  // ZeRO 1, tokens for a whole run; framework none (not the default megatron-core), so that picking
  // megatron-core changes the state.
  const base = { schema: 'trainclock/config/v1', model: 'llama3-8b', gpu: 'h100-sxm', num_gpus: 64, precision: 'fp8-mixed',
                 framework: 'none', parallel: { tp: 2, pp: 4, dp: 0, zero: 1 },
                 training: { seq_len: 4096, global_batch: 256, micro_batch: 1, tokens: 2e11 } };
  const steps = [
    // Megatron-Core picks flash3 on Hopper and overlaps TP: the controls show its values, and
    // changing one writes that key (explicit key > framework > default).
    { name: 'framework', pair: 'fw=megatron-core', flag: '--framework megatron-core', act: (p) => pick(p, 'framework', 'megatron-core') },
    { name: 'attention kernel (a framework knob)', pair: 'ak=flash2', flag: '--attention-kernel flash2',
      act: (p) => pick(p, 'training.attention_kernel', 'flash2') },
    { name: 'overlap TP (a framework knob)', pair: 'otp=0', flag: '--overlap-tp 0', act: (p) => clickControl(p, 'parallel.overlap_tp_comm', 8) },
    { name: 'FP8 recipe', pair: 'p=~', flag: '--precision ', act: (p) => pick(p, 'precision.fp8_recipe', 'blockwise'),
      check: (config) => assert.equal(config.precision.fp8_recipe, 'blockwise') },
    { name: 'first stage layers', pair: 'fsl=5', flag: '--first-stage-layers 5', act: (p) => typeInto(p, 'parallel.first_stage_layers', '5') },
    { name: 'last stage layers', pair: 'lsl=7', flag: '--last-stage-layers 7', act: (p) => typeInto(p, 'parallel.last_stage_layers', '7') },
    // Megatron-Core takes either explicit first/last stage sizes or the embedding/loss slots.
    // 32 layers + the embedding (or + the loss) split into 3 stages of 11.
    { name: 'embedding in the split', pair: 'ess=1', flag: '--embedding-in-stage-split 1',
      reset: { ...base, num_gpus: 48, parallel: { ...base.parallel, pp: 3 } },
      act: (p) => clickControl(p, 'parallel.embedding_in_stage_split', 8) },
    // 11, 11, 10 layers either way here: the loss slot moves only the stated layout (the warnings).
    { name: 'loss in the split', pair: 'lss=1', flag: '--loss-in-stage-split 1', layoutOnly: true,
      reset: { ...base, num_gpus: 48, parallel: { ...base.parallel, pp: 3 } },
      act: (p) => clickControl(p, 'parallel.loss_in_stage_split', 8) },
    { name: 'optimizer', pair: 'o=adamw8bit', flag: '--optimizer adamw8bit', act: (p) => pick(p, 'training.optimizer', 'adamw8bit') },
    { name: 'fine-tuning method', pair: 'ft=lora', flag: '--finetune lora', act: (p) => pick(p, 'training.finetune.method', 'lora') },
    { name: 'LoRA rank', pair: 'lor=64', flag: '--lora-rank 64', act: (p) => typeInto(p, 'training.finetune.lora_rank', '64') },
    { name: 'LoRA targets', pair: 'lot=attention', flag: '--lora-targets attention',
      act: (p) => pick(p, 'training.finetune.lora_targets', 'attention') },
    { name: 'frozen layers', pair: 'frz=4', flag: '--frozen-layers 4', act: (p) => typeInto(p, 'training.finetune.frozen_layers', '4') },
    { name: 'offload optimizer', pair: 'oo=1', flag: '--offload-optimizer 1', act: (p) => clickControl(p, 'training.offload_optimizer', 8) },
    ...[['checkpoint interval', 'training.checkpoint_interval_s', 'cki', '600', '--checkpoint-interval'],
        ['storage bandwidth', 'training.storage_bw_gbps', 'sbw', '20', '--storage-bw'],
        ['restart', 'training.restart_s', 'rst', '3600', '--restart'],
        ['failure rate', 'training.failure_rate_per_gpu_hour', 'fr', '0.001', '--failure-rate']].map(([name, key, link, value, flag]) => ({
      name, pair: `${link}=${value}`, flag: `${flag} ${value}`, act: async (p) => {
        // Clearing "default" writes the value in effect; then the typed one.
        await clickControl(p, `${key}.default`, 8);
        await p.waitForFunction((k) => new RegExp(`(^|&)${k}=`).test(window.trainclockView.fragment), link);
        await typeInto(p, key, value);
      } })),
    { name: 'ideal run', pair: 'ideal=1', flag: '--ideal 1', act: (p) => clickControl(p, 'training.ideal', 8) },
    // The less common keys sit in a collapsed node (last here: opening it moves the controls below).
    { name: 'offload activations', pair: 'oa=1', flag: '--offload-activations 1', act: async (p) => {
      await clickControl(p, 'training.more', 8);
      await p.waitForFunction((k) => k in window.trainclockView.controls, 'training.offload_activations', { timeout: 20000 });
      await clickControl(p, 'training.offload_activations', 8);
    } },
    { name: 'memory headroom', pair: 'mhg=10', flag: '--memory-headroom-gib 10', layoutOnly: true,
      act: (p) => typeInto(p, 'training.memory_headroom_gib', '10'),
      check: (config) => assert.equal(config.training.memory_headroom_gib, 10) },
  ];

  it('each control changes the result, the fragment and the CLI command, which predicts what the page shows', { timeout: 4 * LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    // Tall enough for every input control (the lowest, the FP8 recipe, ends near 1300 px; LoRA rows
    // add ~70), no taller: software GL draws each frame in time proportional to the pixels.
    await page.setViewportSize({ width: 1280, height: 1500 });
    await showConfig(page, base);
    let state = { ...(await view(page)), command: await cliOf(page) };
    for (const step of steps) {
      if (step.reset) {
        await showConfig(page, step.reset);
        state = { ...(await view(page)), command: await cliOf(page) };
      }
      await step.act(page);
      let next;
      try {
        next = await changed(page, state);
      } catch (error) {
        throw new Error(`${step.name}: the fragment did not change (${(await page.locator('#banner').textContent())})`);
      }
      // A default box clicked first writes the default value; wait for the typed one.
      await page.waitForFunction((pair) => window.trainclockView.fragment.includes(pair), step.pair, { timeout: 20000 })
        .catch(() => {});
      next = { ...(await view(page)), command: await cliOf(page) };
      assert.ok(next.fragment.includes(step.pair), `${step.name}: ${next.fragment} has ${step.pair}`);
      assert.ok(next.command.includes(step.flag), `${step.name}: ${next.command} has ${step.flag}`);
      assert.notEqual(next.command, state.command, step.name);
      const text = (r) => JSON.stringify({ ...r, config: null, timeline: null });
      const moved = step.layoutOnly ? text(next.result) !== text(state.result)
        : next.result.iteration_time_s !== state.result.iteration_time_s || next.result.total_time_s !== state.result.total_time_s ||
          next.result.memory.per_gpu_gib !== state.result.memory.per_gpu_gib;
      assert.ok(moved, `${step.name} changes the result`);
      const native = runCommand(next.command);
      assert.equal(native.iteration_time_s, next.result.iteration_time_s, `${step.name}: CLI command vs page`);
      assert.equal(native.total_time_s, next.result.total_time_s, `${step.name}: CLI command vs page`);
      step.check?.(await configOf(page, next.fragment));
      state = next;
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a link with every new key round-trips and predicts as the CLI does', { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const configs = [
      { ...base, framework: 'megatron-core', precision: { preset: 'fp8-mixed', fp8_recipe: 'blockwise' },
        parallel: { ...base.parallel, first_stage_layers: 5, last_stage_layers: 7, overlap_tp_comm: true, overlap_dp_comm: false },
        training: { ...base.training, attention_kernel: 'flash3', optimizer: 'adamw8bit',
                    finetune: { method: 'lora', lora_rank: 32, lora_targets: 'attention', frozen_layers: 2 },
                    offload_optimizer: true, checkpoint_interval_s: 900, storage_bw_gbps: 40, restart_s: 120,
                    failure_rate_per_gpu_hour: 1e-4 } },
      { ...base, framework: 'deepspeed', precision: 'bf16-mixed', parallel: { tp: 1, pp: 1, dp: 0, zero: 3 },
        training: { ...base.training, finetune: { method: 'qlora', lora_rank: 16 }, offload_params: true,
                    checkpoint_interval_steps: 50, ideal: false } },
      { ...base, parallel: { ...base.parallel, pp: 2, embedding_in_stage_split: true, loss_in_stage_split: true },
        training: { ...base.training, ideal: true } },
    ];
    for (const config of configs) {
      const fragment = await showConfig(page, config);
      for (const key of ['fw=', 'p=', 'fsl=', 'ft=', 'cki=', 'cks=', 'ideal='].filter((k) => fragment.includes(k))) assert.ok(key);
      const shown = await view(page);
      assert.equal(shown.fragment, fragment, 'the page keeps every key of the link');
      const reopened = await configOf(page, shown.fragment);
      assert.deepEqual(reopened, await configOf(page, fragment));
      const native = nativePredict(JSON.stringify(config));
      assert.equal(shown.result.iteration_time_s, native.iteration_time_s);
      assert.equal(shown.result.total_time_s, native.total_time_s);
      assert.equal(runCommand(await cliOf(page)).total_time_s, native.total_time_s);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('the likely range of step and total time is the result\'s interval, drawn as whiskers with its reason', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    const { result, controls } = await view(page);
    const native = nativePredict(JSON.stringify(await configOf(page, (await view(page)).fragment)));
    assert.equal(result.iteration_time_s_low, native.iteration_time_s_low);
    assert.equal(result.total_time_s_high, native.total_time_s_high);
    // The range is built around the estimate (intervals.hpp): it always holds it.
    assert.ok(result.iteration_time_s_low <= result.iteration_time_s && result.iteration_time_s <= result.iteration_time_s_high);
    assert.equal(result.interval_reason, native.interval_reason);
    assert.ok(controls['interval.step'] && controls['interval.total'] && controls['interval.reason']);
    await page.close();
  });
});

describe('import by paste or drop', () => {
  const paste = (page, text) => page.evaluate((t) => {
    const transfer = new DataTransfer();
    transfer.setData('text/plain', t);
    document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true }));
  }, text);
  const drop = (page, name, text) => page.evaluate(([n, t]) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([t], n, { type: 'text/plain' }));
    document.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true }));
  }, [name, text]);
  const file = (path) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
  const fileUrl = (path) => new URL(`../../${path}`, import.meta.url).pathname;

  // The state after importing an HF config.json predicts as the command before it with the file as
  // --model (the CLI reads the HF config itself).
  async function assertPredictsAsModelFile(page, before, after, path) {
    const words = shellWords(before.command);
    words[words.indexOf('--model') + 1] = fileUrl(path);
    const out = spawnSync(cli, [...words.slice(1), '--json'], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    const native = JSON.parse(out.stdout);
    assert.equal(after.result.iteration_time_s, native.iteration_time_s);
    assert.equal(after.result.total_time_s, native.total_time_s);
    assert.equal(after.result.memory.per_gpu_gib, native.memory.per_gpu_gib);
    assert.equal(await page.locator('#banner').isHidden(), true);
  }

  it('a pasted HF config.json predicts as `trainclock predict --model FILE`', { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const before = { ...(await view(page)), command: await cliOf(page) };
    await paste(page, file('tests/core/hf/mistral-7b.json'));
    await assertPredictsAsModelFile(page, before, await changed(page, before), 'tests/core/hf/mistral-7b.json');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('Ctrl+V with an HF config.json on the clipboard (real keyboard) predicts as `trainclock predict --model FILE`',
     { timeout: LIMIT_MS }, async () => {
    await shared.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: shared.server.url });
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const before = { ...(await view(page)), command: await cliOf(page) };
    const path = 'tests/core/hf/gemma2-9b.json';
    await page.evaluate((text) => navigator.clipboard.writeText(text), file(path));
    await page.locator('#canvas').focus();
    await page.keyboard.press('Control+V');
    let after;
    try {
      after = await changed(page, before);
    } catch {
      throw new Error(`Ctrl+V did not import the clipboard (${await page.locator('#banner').textContent()})`);
    }
    assert.match(after.fragment, /(^|&)m=~/, 'a custom model from the clipboard');
    await assertPredictsAsModelFile(page, before, after, path);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a dropped Megatron command line, torchtitan TOML or DeepSpeed JSON predicts as `trainclock import` | predict', { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const cases = [
      { path: 'tests/core/launch/megatron-llama3-8b-h100-fp8.txt', kind: 'megatron', flags: ['--gpu', 'h100-sxm'], fw: 'fw=megatron-core' },
      { path: 'tests/core/launch/torchtitan-llama3-70b.toml', kind: 'torchtitan', flags: ['--gpu', 'h100-sxm', '--gpus', '1024'],
        fw: 'fw=torchtitan' },
      { path: 'tests/core/launch/deepspeed-zero3.json', kind: 'deepspeed', flags: ['--model', 'llama3-70b', '--gpu', 'h100-sxm',
        '--gpus', '1024'], fw: 'fw=deepspeed' },
    ];
    for (const c of cases) {
      await showConfig(page, { schema: 'trainclock/config/v1', model: 'llama3-70b', gpu: 'h100-sxm', num_gpus: 1024,
                               precision: 'bf16-mixed', parallel: { tp: 8, pp: 4, dp: 0 },
                               training: { seq_len: 8192, global_batch: 1024 } });
      const before = { ...(await view(page)), command: await cliOf(page) };
      await drop(page, c.path.split('/').pop(), file(c.path));
      let after;
      try {
        after = await changed(page, before);
      } catch {
        throw new Error(`${c.path}: not imported (${await page.locator('#banner').textContent()})`);
      }
      assert.ok(after.fragment.includes(c.fw), `${c.path}: ${after.fragment}`);
      const imported = spawnSync(cli, ['import', c.kind, fileUrl(c.path), ...c.flags], { encoding: 'utf8' });
      assert.equal(imported.status, 0, imported.stderr);
      const native = nativePredict(imported.stdout);
      assert.equal(after.result.iteration_time_s, native.iteration_time_s, c.path);
      assert.equal(after.result.total_time_s, native.total_time_s, c.path);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a calibration JSON applies; a bad text says why in the banner and keeps the last valid state', { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const before = { ...(await view(page)), command: await cliOf(page) };
    await paste(page, '{"gpus": {"h100-sxm": {"memory_efficiency": 0.5, "inter_node_efficiency": 0.4}}}');
    const after = await changed(page, before);
    assert.match(after.fragment, /(^|&)cal=~/);
    assert.ok(after.result.iteration_time_s > before.result.iteration_time_s, 'lower efficiencies, a slower step');
    assert.equal(runCommand(after.command).iteration_time_s, after.result.iteration_time_s);

    for (const [text, message] of [['{"model_type": "nonsense-model"}', /Could not import the Hugging Face config\.json/],
                                   ['{"memory_efficiency": 7}', /calibration/],
                                   ['pretrain_gpt.py --num-layers 0', /Could not import the Megatron/]]) {
      await paste(page, text);
      await frames(page, 2);  // the app has read the paste (the banner may still show the last one's message)
      await page.waitForFunction(() => !document.getElementById('banner').hidden, null, { timeout: 20000 });
      assert.match(await page.locator('#banner').textContent(), message, text);
      assert.match(await page.locator('#banner').textContent(), /last valid state/);
      assert.equal((await view(page)).fragment, after.fragment, 'the last valid state stays');
      // The next change clears the message.
    }
    assert.deepEqual(errors, []);
    await page.close();
  });
});
