// The desktop app (build/bin/trainclock-gui) renders under Xvfb: a screenshot of the virtual
// screen is not blank. Run: `make test-gui` (or `node --test desktop.test.mjs` here).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { it } from 'node:test';
import { colourCount, desktopScreenshot, gui, writeTemp } from './lib.mjs';

it('desktop app renders under Xvfb (screenshot not blank)', () => {
  assert.ok(existsSync(gui), `${gui} missing: run make build`);
  const shot = writeTemp('desktop.png', '');
  desktopScreenshot(shot);
  assert.ok(colourCount(shot) > 50, 'the window shows the app, not one flat colour');
});
