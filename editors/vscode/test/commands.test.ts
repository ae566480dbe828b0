// Every command id the extension hands to VS Code (tree items, code lenses, the status item,
// executeCommand, package.json menus and keybindings) is registered in activate and
// contributed in package.json: else VS Code shows "command '…' not found" when it is run.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { registerCommands, type Parts } from '../src/commands';
import { ui } from './support/vscode';

const root = fileURLToPath(new URL('../..', import.meta.url)); // out/test -> the extension
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    menus: Record<string, { command: string }[]>;
    keybindings: { command: string }[];
    views: Record<string, { id: string }[]>;
  };
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('wire.ts') ? [path] : [];
  });
}

/** Command ids the code attaches or runs: `command: '…'`, `.command = … '…'`, `executeCommand('…'`. */
function usedIds(): Map<string, string> {
  const used = new Map<string, string>(); // id -> where
  for (const file of sources(join(root, 'src'))) {
    const text = readFileSync(file, 'utf8');
    const spots = [
      ...text.matchAll(/executeCommand(?:<[^>]*>)?\(\s*'([^']+)'/g),
      ...[...text.matchAll(/\bcommand\s*[:=]\s*([^;\n]+)/g)].flatMap((m) =>
        [...m[1].matchAll(/'(openprogram\.[\w.]+)'/g)].map((x) => Object.assign(x, { index: m.index }))),
    ];
    for (const m of spots) {
      if (!m[1].startsWith('openprogram.')) continue; // VS Code's own (vscode.diff, workbench...)
      const line = text.slice(0, m.index).split('\n').length;
      used.set(m[1], `${file.slice(root.length)}:${line}`);
    }
  }
  return used;
}

test('the commands registered in activate are exactly the ones package.json contributes', () => {
  ui.registered.length = 0;
  registerCommands({} as Parts); // only registers; no handler runs
  const registered = [...ui.registered].sort();
  assert.equal(new Set(registered).size, registered.length, 'a command is registered twice');
  const contributed = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(registered, contributed);
});

test('every command id used in the code, the menus and the keybindings is registered', () => {
  ui.registered.length = 0;
  registerCommands({} as Parts);
  const registered = new Set(ui.registered);
  // VS Code registers `<view id>.focus` for each contributed view
  const views = Object.values(pkg.contributes.views).flat().map((v) => `${v.id}.focus`);
  const known = new Set([...registered, ...views]);
  const used = usedIds();
  assert.ok(used.has('openprogram.showCheckpointDiff') && used.has('openprogram.restoreHunk') && used.has('openprogram.focusChat'),
    `the scan finds the tree item, code lens and status item commands: ${[...used.keys()].join(', ')}`);
  const missing = [...used].filter(([id]) => !known.has(id)).map(([id, where]) => `${id} (${where})`);
  assert.deepEqual(missing, [], 'used but never registered');
  const menus = Object.entries(pkg.contributes.menus).flatMap(([menu, items]) => items.map((i) => ({ menu, id: i.command })));
  const keys = pkg.contributes.keybindings.map((k) => ({ menu: 'keybindings', id: k.command }));
  const unknown = [...menus, ...keys].filter((m) => !registered.has(m.id)).map((m) => `${m.id} (${m.menu})`);
  assert.deepEqual(unknown, [], 'in package.json menus or keybindings but never registered');
});
