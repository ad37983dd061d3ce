// Browser tests of the site (build-web/site/) in headless Debian chromium: clean load, a rendered
// canvas, predictions identical to the native CLI, links that restore state, real mouse/keyboard
// input, and a clear message for a corrupt link. Run: `make test-web` (or `node --test` here).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { colourCount, frames, leafDifferences, settled, testLimitMs as LIMIT_MS, typeInto, nativePredict, openApp, sharedBrowser,
  writeTemp } from './lib.mjs';

// Presets across GPUs (NVIDIA V100/A100/H100/H200/B200/L40S/RTX, AMD MI250X/MI300X) and every
// precision preset; layouts chosen to be valid (TP divides heads, batch divides by DP).
const layout = (model, gpu, gpus, precision, tp, pp, seq, gbs, mbs, extra = {}) => JSON.stringify({
  schema: 'trainclock/config/v1', model, gpu, num_gpus: gpus, precision,
  parallel: { tp, pp, dp: 0, ...(extra.parallel || {}) },
  training: { seq_len: seq, global_batch: gbs, micro_batch: mbs, tokens: 1e11, ...(extra.training || {}) },
});
const configs = [
  layout('gpt2', 'v100-sxm2-32gb', 8, 'fp32', 1, 1, 1024, 64, 8),
  layout('gpt2-medium', 'v100-sxm2-32gb', 8, 'fp16-amp', 1, 1, 1024, 64, 4),
  layout('bert-large', 'v100-sxm2-16gb', 8, 'fp16-mixed', 1, 1, 512, 256, 8),
  layout('gpt3-1.3b', 'a100-sxm4-40gb', 8, 'tf32', 1, 1, 2048, 256, 4),
  layout('gpt3-1.3b', 'a100-sxm4-80gb', 8, 'bf16-amp', 1, 1, 2048, 256, 4),
  layout('gpt3-6.7b', 'a100-sxm4-80gb', 64, 'bf16-mixed', 2, 1, 2048, 512, 2),
  layout('gpt3-13b', 'a100-sxm4-80gb', 128, 'fp16-mixed', 4, 2, 2048, 1024, 1, { training: { recompute: 'selective' } }),
  layout('gpt3-175b', 'a100-sxm4-80gb', 1024, 'bf16-mixed', 8, 16, 2048, 1536, 1, { parallel: { sequence_parallel: true } }),
  layout('llama2-7b', 'a100-pcie-40gb', 16, 'bf16', 2, 1, 4096, 256, 1, { parallel: { zero: 3 } }),
  layout('llama3-8b', 'h100-sxm', 64, 'bf16-mixed', 1, 1, 8192, 512, 1, { parallel: { zero: 1 } }),
  layout('llama3-8b', 'h100-sxm', 64, 'fp8-mixed', 1, 1, 8192, 512, 1, { parallel: { zero: 1 } }),
  layout('llama3-70b', 'h100-sxm', 1024, 'bf16-mixed', 8, 4, 8192, 1024, 1, { training: { recompute: 'selective' } }),
  layout('llama3-70b', 'h100-sxm', 1024, 'fp8-mixed', 8, 4, 8192, 1024, 1, { parallel: { sequence_parallel: true } }),
  layout('llama3-70b', 'h100-sxm', 512, 'bf16-mixed', 8, 4, 8192, 512, 1,
         { parallel: { schedule: 'interleaved', virtual_stages: 2, sequence_parallel: true } }),
  layout('llama3.1-405b', 'h100-sxm', 16384, 'bf16-mixed', 8, 16, 8192, 2048, 1, { parallel: { sequence_parallel: true } }),
  layout('mixtral-8x7b', 'h100-sxm', 64, 'bf16-mixed', 2, 1, 4096, 512, 1, { parallel: { ep: 8 } }),
  layout('mistral-7b', 'h200-sxm', 32, 'bf16-mixed', 1, 1, 4096, 256, 2),
  layout('qwen2.5-7b', 'mi300x', 64, 'bf16-mixed', 1, 1, 4096, 512, 1),
  layout('gpt2-xl', 'rtx-4090', 8, 'fp16-amp', 1, 1, 1024, 64, 2, { training: { recompute: 'full' } }),
  layout('llama2-13b', 'l40s', 16, 'bf16-mixed', 2, 2, 4096, 128, 1, { parallel: { schedule: 'gpipe' } }),
  layout('gpt3-2.7b', 'mi250x', 16, 'bf16-mixed', 4, 1, 2048, 64, 1),
  layout('llama3-8b', 'b200', 64, 'fp8-mixed', 1, 1, 8192, 512, 2),
  layout('nemotron4-15b', 'h100-sxm', 64, 'fp16-mixed', 2, 1, 4096, 256, 1),
  layout('gpt3-13b', 'v100-sxm2-32gb', 64, 'fp16', 4, 2, 2048, 256, 1, { training: { flash_attention: false } }),
  layout('llama3.1-8b', 'a100-sxm4-80gb', 16, 'fp32', 2, 1, 2048, 64, 1, { training: { recompute: 'full' } }),
];

const shared = sharedBrowser();

describe('site', () => {
  it('loads without console errors and renders a non-blank canvas', { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    await settled(page);
    await frames(page, 2);
    const shot = writeTemp('site.png', await page.locator('#canvas').screenshot());
    assert.deepEqual(errors, []);
    assert.ok(colourCount(shot) > 50, 'the canvas shows the app, not one flat colour');
    assert.equal(await page.locator('#banner').isHidden(), true, 'no message on a clean start');
    await page.close();
  });

  it(`predict in the page returns exactly the native CLI's numbers for ${configs.length} configs`, { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    const results = await page.evaluate((list) => list.map((c) => window.trainclock.predict(c)), configs);
    const differences = [];
    for (let i = 0; i < configs.length; ++i) {
      const pageResult = JSON.parse(results[i]);
      assert.ok(!pageResult.error, `config ${i} fails in the page: ${JSON.stringify(pageResult.error)}\n${configs[i]}`);
      for (const difference of leafDifferences(nativePredict(configs[i]), pageResult, ['timeline']))
        differences.push(`config ${i}: ${difference}`);
    }
    assert.ok(configs.length >= 20);
    assert.deepEqual(differences, []);
    await page.close();
  });

  it('opening a link restores its state and its result', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    const config = configs[13];
    const { fragment, expected } = await page.evaluate((c) => ({
      fragment: JSON.parse(window.trainclock.encodeLink(c)).fragment,
      expected: JSON.parse(window.trainclock.predict(c)),
    }), config);
    await page.close();
    const opened = await openApp(shared.browser.context, shared.server.url, fragment);
    const view = await opened.page.evaluate(() => window.trainclockView);
    assert.equal(view.fragment, fragment, 'the page keeps the link it was opened with');
    assert.equal(new URL(opened.page.url()).hash, '#' + fragment);
    assert.deepEqual(leafDifferences(expected, view.result, ['timeline', 'config']), []);
    assert.deepEqual(opened.errors, []);
    await opened.page.close();
  });

  it('real mouse and keyboard input changes a setting, the result and the URL fragment', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    const before = await page.evaluate(() => window.trainclockView);
    const tp = (fragment) => page.evaluate((f) => JSON.parse(window.trainclock.decodeLink(f)).config.parallel.tp, fragment);
    assert.equal(await tp(before.fragment), 8);

    await typeInto(page, 'parallel.tp', '4');
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before.fragment);
    const afterKeys = await page.evaluate(() => window.trainclockView);
    assert.equal(await tp(afterKeys.fragment), 4);
    assert.notEqual(afterKeys.result.iteration_time_s, before.result.iteration_time_s);
    assert.equal(new URL(page.url()).hash, '#' + afterKeys.fragment);

    // A plain click on a checkbox.
    const [cx0, cy0, , cy1] = afterKeys.controls['parallel.sequence_parallel'];
    await page.mouse.click(cx0 + 8, (cy0 + cy1) / 2);
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, afterKeys.fragment);
    const afterClick = await page.evaluate(() => window.trainclockView);
    const sp = await page.evaluate((f) => JSON.parse(window.trainclock.decodeLink(f)).config.parallel.sequence_parallel,
      afterClick.fragment);
    assert.equal(sp, false);
    assert.notEqual(afterClick.result.iteration_time_s, afterKeys.result.iteration_time_s);
    await page.close();
  });

  it('an invalid combination is explained and the last valid state is kept', { timeout: LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const before = await page.evaluate(() => window.trainclockView);
    await typeInto(page, 'parallel.tp', '3');  // 3 does not divide the 64 heads of llama3-70b
    await page.waitForFunction(() => !document.getElementById('banner').hidden);
    assert.match(await page.locator('#banner').textContent(), /parallel\.tp/);
    await frames(page, 2);
    const after = await page.evaluate(() => window.trainclockView);
    assert.equal(after.fragment, before.fragment);
    assert.equal(after.result.iteration_time_s, before.result.iteration_time_s);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a link opened in a running page (hash change), then "Copy CLI command" reproduces the result', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    const fragment = await page.evaluate((c) => JSON.parse(window.trainclock.encodeLink(c)).fragment, configs[14]);
    // As when a frame drawn between the edit and its hashchange event republishes the shown state.
    await page.evaluate((f) => { const shown = location.hash; location.hash = f; history.replaceState(null, '', shown); }, fragment);
    await page.waitForFunction((f) => window.trainclockView.fragment === f, fragment, { polling: 'raf' });
    const view = await page.evaluate(() => window.trainclockView);
    await page.evaluate(() => navigator.clipboard.writeText(''));
    const [x0, y0, x1, y1] = view.controls.copy_cli;
    await page.mouse.click((x0 + x1) / 2, (y0 + y1) / 2);
    await page.waitForFunction(() => navigator.clipboard.readText().then((t) => t.startsWith('trainclock predict')));
    const command = await page.evaluate(() => navigator.clipboard.readText());
    const flags = command.split(' ').slice(2).map((word) => word.replace(/^'(.*)'$/, '$1'));
    assert.match(command, /^trainclock predict /);
    assert.equal(nativePredict('', flags).iteration_time_s, view.result.iteration_time_s, command);
    await page.close();
  });

  it('a corrupt or outdated link shows a message and keeps a working app', { timeout: LIMIT_MS }, async () => {
    for (const fragment of ['v=1&m=%ZZ&garbage', 'v=999&m=llama3-70b']) {
      const { page, errors } = await openApp(shared.browser.context, shared.server.url, fragment);
      const banner = page.locator('#banner');
      assert.equal(await banner.isVisible(), true, `message shown for #${fragment}`);
      assert.match(await banner.textContent(), /cannot be opened|invalid/i);
      const view = await page.evaluate(() => window.trainclockView);
      assert.ok(view.result && view.result.iteration_time_s > 0, 'the last valid (default) state is shown');
      const shot = writeTemp('corrupt.png', await page.locator('#canvas').screenshot());
      assert.ok(colourCount(shot) > 50, 'never a blank canvas');
      assert.deepEqual(errors, []);
      await page.close();
    }
  });
});
