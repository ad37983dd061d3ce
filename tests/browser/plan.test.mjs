// Browser tests of the Plan panel (issue 24 item 4) and the page fixes of issue 25 (items 8 and 13):
// the panel's options against `trainclock plan`, its link and its click; plot axes, palette, notes,
// MFU basis, dropdown previews, slider values, refused links, an HF config that needs another TP, and
// the node's peer-to-peer field. Run: `make test-browser` (or `node --test plan.test.mjs` here).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli, clickControl, configOf, controlRect, data, frames, nativePredict, openApp, openFragment, repo, settled, sharedBrowser,
  testLimitMs as LIMIT_MS, view, writeTemp } from './lib.mjs';

const shared = sharedBrowser();

// A small plan: Llama 3.1 8B, 1e12 tokens, a 30-day deadline, up to 64 GPUs of every priced type.
const planState = 'v=1&m=llama3.1-8b&g=h100-sxm&N=64&p=bf16-mixed&seq=4096&tok=1000000000000';
const planPart = '&plan=30,0,64';

async function planned(page) {
  await page.waitForFunction(() => window.trainclockData?.plan !== undefined, null, { timeout: 240000, polling: 100 });
  return data(page, 'plan');
}

// CIE L*a*b* of "#rrggbb" (sRGB, D65) and the CIE76 distance.
function lab(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const [x, y, z] = [(r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047, r * 0.2126 + g * 0.7152 + b * 0.0722,
    (r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883];
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}
const deltaE = (a, b) => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]));

describe('plan panel', () => {
  it('a plan link shows the options of `trainclock plan` for the same inputs; a click applies one', { timeout: 4 * LIMIT_MS }, async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url, planState + planPart);
    await page.setViewportSize({ width: 1280, height: 1400 });
    const shown = await planned(page);
    assert.equal(shown.link, planPart);
    assert.ok((await view(page)).fragment.endsWith(planPart), 'the link carries the plan inputs');
    const path = writeTemp('plan-base.json', JSON.stringify(shown.config));
    const out = spawnSync(cli, ['plan', '--config', path, '--days', '30', '--max-gpus', '64', '--json'], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    const native = JSON.parse(out.stdout);
    const page_ = shown.report;
    const row = (o) => `${o.gpu} x${o.num_gpus} ${o.precision} ${o.days} days $${o.cost_usd} ${o.pareto ? 'front' : ''}`;
    assert.ok(native.options.length >= 2, 'the plan has options');
    assert.deepEqual(page_.options.map(row), native.options.map(row));
    assert.equal(page_.fastest_within_budget, native.fastest_within_budget);
    assert.equal(page_.cheapest_within_deadline, native.cheapest_within_deadline);
    assert.deepEqual(page_.dropped, native.dropped);
    assert.equal(page_.stats.searched, native.stats.searched);
    // The page API (bindings.cpp: the core's plan_json) gives the same options.
    const api = JSON.parse(await page.evaluate((c) => window.trainclock.plan(c, JSON.stringify({ days: 30, max_gpus: 64 })),
      JSON.stringify(shown.config)));
    assert.deepEqual(api.options.map(row), native.options.map(row));
    const gpus = new Set(page_.options.map((o) => o.gpu));
    assert.ok(gpus.size >= 2, `options over ${gpus.size} GPU types`);
    const plot = (await data(page, 'plots'))['plan.plot'];
    assert.ok(plot && plot.y.ticks.length >= 3 && plot.x.title.includes('time'), JSON.stringify(plot));

    // A click on the cheapest option's row applies its config: the state predicts as that config.
    const cheapest = native.options[native.cheapest_within_deadline];
    const before = (await view(page)).fragment;
    await clickControl(page, `plan.option.${native.cheapest_within_deadline}`);
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before);
    const after = await view(page);
    const config = await configOf(page, after.fragment.split('&plan=')[0]);
    assert.equal(config.gpu.name ?? config.gpu, cheapest.gpu);
    assert.equal(config.num_gpus, cheapest.num_gpus);
    assert.equal(after.result.total_time_s / 86400, cheapest.days);
    assert.equal(after.result.cost_usd, cheapest.cost_usd);
    assert.ok(after.fragment.endsWith(planPart), 'the plan stays in the link');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a malformed plan part is refused with a message and the address bar keeps the link', { timeout: LIMIT_MS }, async () => {
    const bad = planState + '&plan=30,zero,64';
    const { page } = await openApp(shared.browser.context, shared.server.url, bad);
    await frames(page, 3);
    assert.match(await page.locator('#banner').textContent(), /plan/);
    assert.equal(await page.evaluate(() => location.hash.slice(1)), bad);
    await page.close();
  });
});

describe('issue 25: the page', () => {
  it('a refused link stays in the address bar (the user\'s link is not replaced)', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    await settled(page);
    const shown = (await view(page)).fragment;
    const bad = 'v=1&m=llama3-70b&g=h100-sxm&N=1024&tp=7';  // 7 divides neither the heads nor the GPUs
    await page.evaluate((f) => { location.hash = f; }, bad);
    await page.waitForFunction(() => !document.getElementById('banner').hidden);
    await frames(page, 3);
    assert.equal((await view(page)).fragment, shown, 'the last valid state is shown');
    assert.equal(await page.evaluate(() => location.hash.slice(1)), bad, 'the address bar keeps the refused link');
    // Opened fresh with a refused link: the same.
    const fresh = await openApp(shared.browser.context, shared.server.url, bad);
    await frames(fresh.page, 3);
    assert.equal(await fresh.page.evaluate(() => location.hash.slice(1)), bad);
    await fresh.page.close();
  });

  it('plots: y tick labels with units, x-axis titles, log scales stated; precisions in distinct colours', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    await settled(page);
    await frames(page, 2);
    const plots = await data(page, 'plots');
    const scaling = Object.keys(plots ?? {}).filter((k) => k.startsWith('scaling.'));
    assert.equal(scaling.length, 4, JSON.stringify(plots));
    for (const key of scaling) {
      const { title, x, y } = plots[key];
      assert.ok(y.ticks.length >= 3, `${key}: ${y.ticks}`);
      for (const tick of y.ticks) assert.match(tick, /[a-z%$]/i, `${key}: tick ${tick} has a unit`);
      assert.equal(x.title, 'GPUs');
      assert.ok(x.log && x.ticks.length >= 3, `${key}: x ticks ${x.ticks}`);
      if (y.log) assert.match(title, /log scale/, key);
    }
    assert.match(plots['scaling.MFU'].y.title, /MFU \(.*peak\)/, 'the MFU axis states its basis');
    const colors = (await data(page, 'scaling')).colors;
    const names = Object.keys(colors);
    assert.ok(names.length >= 9, names.join(' '));
    for (const [i, a] of names.entries())
      for (const b of names.slice(i + 1))
        assert.ok(deltaE(colors[a], colors[b]) >= 25, `${a} ${colors[a]} vs ${b} ${colors[b]}: deltaE ${deltaE(colors[a], colors[b])}`);
    await page.close();
  });

  it('whole-run default notes are neutral, not red; errors stay red; MFU states its basis', { timeout: LIMIT_MS }, async () => {
    const { page } = await openApp(shared.browser.context, shared.server.url);
    await settled(page);
    await frames(page, 2);
    const messages = await data(page, 'messages');
    const red = (hex) => parseInt(hex.slice(1, 3), 16) > 150 && parseInt(hex.slice(3, 5), 16) < 80;
    const whole = messages.filter((m) => m.text.startsWith('whole run'));
    assert.equal(whole.length, 1, JSON.stringify(messages));
    assert.equal(whole[0].kind, 'note');
    assert.ok(!red(whole[0].color), whole[0].color);
    const summary = await data(page, 'summary');
    assert.ok(Object.keys(summary).some((k) => /^MFU \(model FLOP\/s \/ dense BF16 peak\)$/.test(k)), Object.keys(summary).join(', '));
    // An invalid state: its error is red.
    await page.evaluate(() => { location.hash = 'v=1&m=llama3-70b&g=h100-sxm&N=1024&tp=8&pp=4&mbs=3'; });
    await page.waitForFunction(() => (window.trainclockData?.messages ?? []).some((m) => m.kind === 'error'), null, { polling: 'raf' })
      .catch(() => {});
    const errors = (await data(page, 'messages')).filter((m) => m.kind === 'error');
    for (const e of errors) assert.ok(red(e.color), e.color);
    await page.close();
  });

  for (const [width, height] of [[1280, 800], [390, 844]]) {
    it(`at ${width}x${height}: no dropdown preview is cut; no slider value sits under its handle`, { timeout: LIMIT_MS }, async () => {
      const { page } = await openApp(shared.browser.context, shared.server.url);
      await page.setViewportSize({ width, height });
      await frames(page, 3);
      const combos = await data(page, 'combos');
      assert.ok(combos.length >= 4, JSON.stringify(combos));
      for (const c of combos) assert.ok(c.preview_w <= c.room_w, `${c.label}: "${c.preview}" ${c.preview_w} px in ${c.room_w} px`);
      const sliders = await data(page, 'sliders');
      assert.ok(sliders.length >= 6, JSON.stringify(sliders));
      for (const s of sliders)
        assert.ok(s.handle < s.text[0] - 4 || s.handle > s.text[1] + 4, `${s.label}: handle ${s.handle} in ${s.text}`);
      await page.close();
    });
  }

  it('a pasted HF config.json whose heads the current TP does not divide imports with the nearest valid TP, stated', { timeout: LIMIT_MS },
     async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    const before = await view(page);
    assert.equal((await configOf(page, before.fragment)).parallel.tp, 8);
    const text = readFileSync(join(repo, 'tests/core/hf/qwen2-7b.json'), 'utf8');  // 28 heads, 4 KV heads
    await page.evaluate((t) => {
      const transfer = new DataTransfer();
      transfer.setData('text/plain', t);
      document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true }));
    }, text);
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before.fragment, { timeout: 20000 });
    const after = await view(page);
    const config = await configOf(page, after.fragment);
    assert.equal(config.model.heads ?? JSON.parse(text).num_attention_heads, 28);
    assert.notEqual(config.parallel.tp, 8);
    assert.equal(28 % config.parallel.tp, 0, `TP ${config.parallel.tp} divides the 28 heads`);
    assert.equal(await page.locator('#banner').isHidden(), true);
    const imported = await data(page, 'import');
    assert.ok(imported.warnings.some((w) => w.includes('TP 8') && w.includes(`TP set to ${config.parallel.tp}`)), imported.warnings.join('\n'));
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('the node\'s peer-to-peer field changes the result and the link, which predicts as the CLI does; expert TP is a field', { timeout: LIMIT_MS },
     async () => {
    const { page, errors } = await openApp(shared.browser.context, shared.server.url);
    await controlRect(page, 'parallel.expert_tp');
    const before = await view(page);
    await clickControl(page, 'node.peer_to_peer', 8);
    await page.waitForFunction((f) => window.trainclockView.fragment !== f, before.fragment);
    const after = await view(page);
    const config = await configOf(page, after.fragment);
    assert.equal(config.node.peer_to_peer, false);
    assert.ok(after.result.iteration_time_s > before.result.iteration_time_s, 'intra-node collectives through host memory are slower');
    const native = nativePredict(JSON.stringify(config));
    assert.equal(after.result.iteration_time_s, native.iteration_time_s);
    // Reloaded from the link: the field is still off.
    await openFragment(page, before.fragment);
    await openFragment(page, after.fragment);
    assert.equal((await view(page)).result.iteration_time_s, after.result.iteration_time_s);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
